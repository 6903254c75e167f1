import { expect } from 'chai';
import { ApiKey } from '../../src/protocol/generated';
import type { ProduceResponse } from '../../src/protocol/generated/ProduceResponse';
import type { FetchResponse } from '../../src/protocol/generated/FetchResponse';
import type { CreateTopicsResponse } from '../../src/protocol/generated/CreateTopicsResponse';
import { ErrorCode } from '../../src/common/errors';
import { buildBatchSync } from '../../src/records/records';
import type { PartitionLog } from '../../src/storage';
import { RawClient } from '../helpers/raw-client';
import { withBroker } from '../helpers/broker';

// A Fetch naming many partitions reads them side by side only as far as its byte budget reaches:
// the limits of the reads in flight at once never add up to more than min(max_bytes, fetch.max.bytes).
describe('fetch memory', function () {
  this.timeout(20000);
  const broker = withBroker();
  const PARTITIONS = 8;
  const BUDGET = 300_000;

  it('keeps the reads in flight within the request budget', async () => {
    const c = await RawClient.connect(broker.current().port);
    try {
      const created = await c.request<CreateTopicsResponse>(ApiKey.CreateTopics, 7, {
        topics: [{ name: 'wide', numPartitions: PARTITIONS, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 1000, validateOnly: false,
      });
      expect(created.topics[0].errorCode).to.equal(ErrorCode.NONE);
      const records = buildBatchSync({ records: Array.from({ length: 100 }, (_, i) => ({ key: null, value: Buffer.alloc(2000, i) })) });
      const produced = await c.request<ProduceResponse>(ApiKey.Produce, 9, {
        transactionalId: null, acks: 1, timeoutMs: 5000,
        topicData: [{ name: 'wide', partitionData: Array.from({ length: PARTITIONS }, (_, index) => ({ index, records })) }],
      });
      expect(produced.responses[0].partitionResponses.map((p) => p.errorCode)).to.deep.equal(Array(PARTITIONS).fill(ErrorCode.NONE));

      let inFlight = 0;
      let most = 0;
      for (let index = 0; index < PARTITIONS; index++) {
        const log: PartitionLog = broker.current().broker.replicas.partition('wide', index)!.log;
        const read = log.readBytes.bind(log);
        log.readBytes = async (offset, maxBytes, opts) => {
          inFlight += maxBytes;
          most = Math.max(most, inFlight);
          try {
            return await read(offset, maxBytes, opts);
          } finally {
            inFlight -= maxBytes;
          }
        };
      }
      const res = await c.request<FetchResponse>(ApiKey.Fetch, 11, {
        replicaId: -1, maxWaitMs: 0, minBytes: 0, maxBytes: BUDGET, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
        topics: [{ topic: 'wide', partitions: Array.from({ length: PARTITIONS }, (_, partition) => ({
          partition, fetchOffset: 0n, partitionMaxBytes: 150_000, currentLeaderEpoch: -1, logStartOffset: -1n,
        })) }],
        forgottenTopicsData: [], rackId: '',
      });
      const sizes = res.responses[0].partitions.map((p) => p.records?.length ?? 0);
      expect(sizes.reduce((a, b) => a + b, 0)).to.be.at.most(BUDGET).and.above(0);
      expect(most).to.be.at.most(BUDGET);
    } finally {
      c.close();
    }
  });
});
