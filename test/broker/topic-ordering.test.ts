// The controller applies topic operations one at a time, in order (Kafka's controller event queue):
// a DeleteTopics and a Metadata that auto-creates the same name, from two connections at once, leave
// the topic either whole (every partition's log answers) or absent, never listed with missing logs.
import { expect } from 'chai';
import { ApiKey } from '../../src/protocol/generated';
import type { MetadataResponse } from '../../src/protocol/generated/MetadataResponse';
import type { DeleteTopicsResponse } from '../../src/protocol/generated/DeleteTopicsResponse';
import type { ListOffsetsResponse } from '../../src/protocol/generated/ListOffsetsResponse';
import type { CreateTopicsResponse } from '../../src/protocol/generated/CreateTopicsResponse';
import type { IncrementalAlterConfigsResponse } from '../../src/protocol/generated/IncrementalAlterConfigsResponse';
import { ErrorCode } from '../../src/common/errors';
import { RawClient } from '../helpers/raw-client';
import { withBroker } from '../helpers/broker';

const PARTITIONS = 4;
const ROUNDS = 60;

describe('controller: topic operations one at a time', function () {
  this.timeout(120000);
  const broker = withBroker({ config: { 'num.partitions': String(PARTITIONS) } });

  const metadata = (c: RawClient, name: string, autoCreate: boolean) => c.request<MetadataResponse>(ApiKey.Metadata, 12, {
    topics: [{ name }], allowAutoTopicCreation: autoCreate, includeTopicAuthorizedOperations: false,
  });

  /** Each partition's ListOffsets latest error code. */
  async function partitionErrors(c: RawClient, name: string): Promise<number[]> {
    const res = await c.request<ListOffsetsResponse>(ApiKey.ListOffsets, 7, {
      replicaId: -1, isolationLevel: 0, timeoutMs: 0,
      topics: [{ name, partitions: Array.from({ length: PARTITIONS }, (_, i) => ({ partitionIndex: i, currentLeaderEpoch: -1, timestamp: -1n, maxNumOffsets: 1 })) }],
    });
    return res.topics[0].partitions.map((p) => p.errorCode);
  }

  it('DeleteTopics and an auto-creating Metadata for one name, from two connections, leave it whole or absent', async () => {
    const deleter = await RawClient.connect(broker.current().port);
    const creator = await RawClient.connect(broker.current().port);
    const checker = await RawClient.connect(broker.current().port);
    const name = 'raced';
    const outcomes = { whole: 0, absent: 0 };
    // Log deletion made slow (as on a busy disk), so that creations land while it is under way.
    const replicas = broker.current().broker.replicas;
    const deleteLogs = replicas.topicDeleted.bind(replicas);
    replicas.topicDeleted = async (topic) => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      return deleteLogs(topic);
    };
    for (let round = 0; round < ROUNDS; round++) {
      expect((await metadata(creator, name, true)).topics[0].errorCode).to.equal(ErrorCode.NONE);
      // The creation lands at a different point of the deletion each round (before it, while its
      // metadata is written, while its logs are closed and renamed, after it).
      const [deleted, created] = await Promise.all([
        deleter.request<DeleteTopicsResponse>(ApiKey.DeleteTopics, 6, { topics: [{ name, topicId: '0'.repeat(32) }], timeoutMs: 5000 }),
        new Promise((resolve) => setTimeout(resolve, round % 10)).then(() => metadata(creator, name, true)),
      ]);
      expect(deleted.responses[0].errorCode, `round ${round}: DeleteTopics`).to.equal(ErrorCode.NONE);
      expect(created.topics[0].errorCode, `round ${round}: Metadata`).to.be.oneOf([ErrorCode.NONE, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]);
      const listed = (await metadata(checker, name, false)).topics[0];
      if (listed.errorCode === ErrorCode.NONE) {
        expect(listed.partitions.length, `round ${round}`).to.equal(PARTITIONS);
        expect(await partitionErrors(checker, name), `round ${round}: every partition's log answers`).to.deep.equal(Array(PARTITIONS).fill(ErrorCode.NONE));
        outcomes.whole++;
      } else {
        expect(listed.errorCode).to.equal(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
        outcomes.absent++;
      }
    }
    expect(outcomes.whole + outcomes.absent).to.equal(ROUNDS);
    replicas.topicDeleted = deleteLogs;
    for (const c of [deleter, creator, checker]) {
      expect(c.ended, 'no connection was closed').to.equal(false);
      c.close();
    }
  });

  it('concurrent IncrementalAlterConfigs APPENDs to one topic each edit what the one before left', async () => {
    const clients = await Promise.all(Array.from({ length: 8 }, () => RawClient.connect(broker.current().port)));
    const created = await clients[0].request<CreateTopicsResponse>(ApiKey.CreateTopics, 7, {
      topics: [{ name: 'appended', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [{ name: 'follower.replication.throttled.replicas', value: '0:0' }] }],
      timeoutMs: 1000, validateOnly: false,
    });
    expect(created.topics[0].errorCode).to.equal(ErrorCode.NONE);
    const results = await Promise.all(clients.map((c, i) => c.request<IncrementalAlterConfigsResponse>(ApiKey.IncrementalAlterConfigs, 1, {
      resources: [{ resourceType: 2, resourceName: 'appended', configs: [{ name: 'follower.replication.throttled.replicas', configOperation: 2, value: `${i + 1}:0` }] }],
      validateOnly: false,
    })));
    expect(results.map((r) => r.responses[0].errorCode)).to.deep.equal(clients.map(() => ErrorCode.NONE));
    const value = broker.current().broker.controller.topic('appended')!.configs['follower.replication.throttled.replicas'];
    expect(value.split(',').sort()).to.deep.equal(['0:0', ...clients.map((_, i) => `${i + 1}:0`)].sort());
    for (const c of clients) c.close();
  });
});
