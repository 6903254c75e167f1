// Streams groups (KIP-1071) on the wire, through RawClient against a real broker: the APIs
// advertised, a member joining with a word-count topology at v0 and at v1 (each version's
// fields encoded), the broker creating the internal topics through its Controller, the tasks
// once they exist, StreamsGroupDescribe at both versions, StreamsGroupTopologyDescriptionUpdate
// refused as Kafka without a plugin, and UNSUPPORTED_VERSION while the streams protocol is off.
import { expect } from 'chai';
import { ApiKey } from '../../src/protocol/generated';
import type { ApiVersionsResponse } from '../../src/protocol/generated/ApiVersionsResponse';
import type { FindCoordinatorResponse } from '../../src/protocol/generated/FindCoordinatorResponse';
import type { StreamsGroupHeartbeatResponse } from '../../src/protocol/generated/StreamsGroupHeartbeatResponse';
import type { StreamsGroupDescribeResponse } from '../../src/protocol/generated/StreamsGroupDescribeResponse';
import type { StreamsGroupTopologyDescriptionUpdateResponse } from '../../src/protocol/generated/StreamsGroupTopologyDescriptionUpdateResponse';
import { ErrorCode } from '../../src/common/errors';
import { streamsGroupHeartbeat } from '../../src/handlers/streams-group-heartbeat';
import { RawClient } from '../helpers/raw-client';
import { withBroker } from '../helpers/broker';
import { allowAllRequest } from '../helpers/request-context';

const topology = (app: string) => ({
  epoch: 1,
  subtopologies: [
    { subtopologyId: '0', sourceTopics: ['sw'], sourceTopicRegex: [], stateChangelogTopics: [], repartitionSinkTopics: [`${app}-r-repartition`], repartitionSourceTopics: [], copartitionGroups: [] },
    {
      subtopologyId: '1', sourceTopics: [], sourceTopicRegex: [], repartitionSinkTopics: [],
      stateChangelogTopics: [{ name: `${app}-s-changelog`, partitions: 0, replicationFactor: 0, topicConfigs: [{ key: 'cleanup.policy', value: 'compact' }] }],
      repartitionSourceTopics: [{ name: `${app}-r-repartition`, partitions: 0, replicationFactor: 0, topicConfigs: [] }], copartitionGroups: [],
    },
  ],
});

describe('streams groups on the wire', function () {
  this.timeout(30000);
  const broker = withBroker({
    logLevel: process.env.FJORD_TEST_LOG ?? 'silent',
    config: { 'offsets.topic.num.partitions': '3', 'group.streams.initial.rebalance.delay.ms': '0' },
  });
  let c: RawClient;

  before(async () => {
    const running = broker.current();
    await running.broker.controller.createTopic({ name: 'sw', numPartitions: 3, replicationFactor: 1, assignments: [], configs: {} }, false);
    c = await RawClient.connect(running.port);
    for (let i = 0; ; i++) {
      const res = await c.request<FindCoordinatorResponse>(ApiKey.FindCoordinator, 3, { key: 'x', keyType: 0, coordinatorKeys: [] });
      if (res.errorCode === ErrorCode.NONE) break;
      if (i > 200) throw new Error('coordinator never became available');
      await new Promise((r) => setTimeout(r, 50));
    }
  });
  after(() => c?.close());

  it('advertises StreamsGroupHeartbeat 0-1, StreamsGroupDescribe 0-1 and StreamsGroupTopologyDescriptionUpdate 0', async () => {
    const res = await c.request<ApiVersionsResponse>(ApiKey.ApiVersions, 3, { clientSoftwareName: 't', clientSoftwareVersion: '1' });
    const range = (k: number) => res.apiKeys.find((a) => a.apiKey === k);
    expect([88, 89, 93].map((k) => [k, range(k)?.minVersion, range(k)?.maxVersion])).to.deep.equal([[88, 0, 1], [89, 0, 1], [93, 0, 0]]);
  });

  it('answers UNSUPPORTED_VERSION while streams.version is 0 or `streams` is not a rebalance protocol, as Kafka', async () => {
    const ctx = { apiKey: 88, apiVersion: 1, correlationId: 1, clientId: 'c', peer: '127.0.0.1:1', ...allowAllRequest, responseBuffer: Buffer.alloc, closeConnection: () => undefined, onConnectionClose: () => () => undefined };
    const answer = async (streamsVersion: number, protocols: string[]) => {
      const handler = streamsGroupHeartbeat.bind({ groups: broker.current().broker.groups, streamsVersion: () => streamsVersion, config: { getList: () => protocols } });
      return (await handler.handle({ groupId: 'g', memberId: 'm', memberEpoch: 0, endpointInformationEpoch: 0 }, ctx))!.errorCode;
    };
    expect(await answer(0, ['classic', 'consumer', 'streams'])).to.equal(ErrorCode.UNSUPPORTED_VERSION);
    expect(await answer(1, ['classic', 'consumer'])).to.equal(ErrorCode.UNSUPPORTED_VERSION);
    expect(await answer(1, ['classic', 'streams'])).to.equal(ErrorCode.INVALID_REQUEST); // served: the join lacks its topology
  });

  for (const version of [0, 1]) {
    it(`v${version}: a member joins, the broker creates the internal topics, the member gets every task`, async () => {
      const app = `app-v${version}`;
      const heartbeat = (body: object) => c.request<StreamsGroupHeartbeatResponse>(ApiKey.StreamsGroupHeartbeat, version, {
        groupId: app, memberId: 'm1', endpointInformationEpoch: 0, processId: 'p1', userEndpoint: { host: 'localhost', port: 8080 }, ...body,
      });
      const joined = await heartbeat({ memberEpoch: 0, rebalanceTimeoutMs: 30_000, topology: topology(app), activeTasks: [], standbyTasks: [], warmupTasks: [], clientTags: [] });
      expect(joined).to.deep.include({ errorCode: 0, memberEpoch: 1, activeTasks: [] });
      expect(joined.status!.map((s) => s.statusCode)).to.deep.equal([3]);
      // v0 has the int32 field, v1 the int64 one.
      if (version === 0) expect(joined.acceptableRecoveryLagLegacy).to.equal(0);
      else expect(joined.acceptableRecoveryLag).to.equal(10_000n);
      for (let i = 0; !broker.current().broker.controller.topic(`${app}-s-changelog`); i++) {
        if (i > 100) throw new Error('the changelog topic was not created');
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(broker.current().broker.controller.topic(`${app}-s-changelog`)!.configs).to.deep.equal({ 'cleanup.policy': 'compact' });
      expect(broker.current().broker.controller.topic(`${app}-r-repartition`)!.partitions).to.have.length(3);
      const assigned = await heartbeat({ memberEpoch: 1, activeTasks: [], standbyTasks: [], warmupTasks: [] });
      expect(assigned).to.deep.include({ errorCode: 0, memberEpoch: 2, status: [] });
      expect(assigned.activeTasks).to.deep.equal([{ subtopologyId: '0', partitions: [0, 1, 2] }, { subtopologyId: '1', partitions: [0, 1, 2] }]);
      expect(assigned.partitionsByUserEndpoint![0].activePartitions.map((t) => t.topic)).to.deep.equal([`${app}-r-repartition`, 'sw']);

      const d = await c.request<StreamsGroupDescribeResponse>(ApiKey.StreamsGroupDescribe, version, { groupIds: [app], includeAuthorizedOperations: false, includeTopologyDescription: version >= 1 });
      expect(d.groups[0]).to.include({ errorCode: 0, groupState: 'Stable', groupEpoch: 2, assignmentEpoch: 2 });
      expect(d.groups[0].members.map((m) => [m.memberId, m.processId, m.memberEpoch])).to.deep.equal([['m1', 'p1', 2]]);
      if (version === 1) expect(d.groups[0]).to.include({ topologyDescriptionStatus: 1, assignorName: 'sticky' });

      expect(await heartbeat({ memberEpoch: -1 })).to.include({ errorCode: 0, memberEpoch: -1 });
    });
  }

  it('StreamsGroupTopologyDescriptionUpdate: UNSUPPORTED_VERSION, no plugin configured, as Kafka answers', async () => {
    const res = await c.request<StreamsGroupTopologyDescriptionUpdateResponse>(ApiKey.StreamsGroupTopologyDescriptionUpdate, 0, {
      groupId: 'app-v1', memberId: 'm1', topologyEpoch: 1, topologyDescription: { subtopologies: [], globalStores: [] },
    });
    expect(res).to.include({ errorCode: ErrorCode.UNSUPPORTED_VERSION, errorMessage: 'The broker has no streams group topology description plugin configured.' });
  });
});
