import { expect } from 'chai';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { startBroker, type RunningBroker } from '../../src/broker';
import { ApiKey } from '../../src/protocol/generated';
import type { ProduceResponse } from '../../src/protocol/generated/ProduceResponse';
import { ErrorCode } from '../../src/common/errors';
import { buildBatchSync } from '../../src/records/records';
import { RawClient } from '../helpers/raw-client';

describe('idempotent producers across a broker restart', function () {
  this.timeout(20000);
  let dataDir: string;
  const running: RunningBroker[] = [];
  before(async () => { dataDir = await mkdtemp(path.join(os.tmpdir(), 'fjord-idem-')); });
  after(async () => {
    for (const b of running) await b.close();
    await rm(dataDir, { recursive: true, force: true });
    await rm(`${dataDir}-crash`, { recursive: true, force: true });
  });

  for (const crash of [false, true]) {
    it(`recognises a retried batch after a ${crash ? 'crash (state rebuilt from the log)' : 'clean restart (state from the snapshot)'}`, async () => {
      const topic = crash ? 'orders-crash' : 'orders';
      const first = await startBroker({ dataDir, logLevel: 'silent', config: { 'num.partitions': '1' } });
      running.push(first);
      await first.broker.controller.createTopic({ name: topic, numPartitions: 1, replicationFactor: 1, assignments: [], configs: {} }, false);
      const send = async (port: number, seq: number) => {
        const c = await RawClient.connect(port);
        const res = await c.request<ProduceResponse>(ApiKey.Produce, 9, {
          transactionalId: null, acks: -1, timeoutMs: 1000,
          topicData: [{ name: topic, partitionData: [{ index: 0, records: buildBatchSync({ producerId: 42, producerEpoch: 0, baseSequence: seq, records: [{ value: 'a' }, { value: 'b' }] }) }] }],
        });
        c.close();
        return res.responses[0].partitionResponses[0];
      };
      expect(Number((await send(first.port, 0)).baseOffset)).to.equal(0);
      expect(Number((await send(first.port, 2)).baseOffset)).to.equal(2);
      // A crash leaves no snapshot and no clean-shutdown marker: the second broker rebuilds from the log.
      if (!crash) await first.close();
      // A crash, as the next process finds it: the files as they are now (one broker per data dir, so a copy).
      const restartDir = crash ? `${dataDir}-crash` : dataDir;
      if (crash) await cp(dataDir, restartDir, { recursive: true });
      const second = await startBroker({ dataDir: restartDir, logLevel: 'silent' });
      running.push(second);
      const retried = await send(second.port, 2);
      expect([retried.errorCode, Number(retried.baseOffset)]).to.deep.equal([ErrorCode.NONE, 2]);
      const gap = await send(second.port, 9);
      expect(gap.errorCode).to.equal(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
      expect(second.broker.replicas.partition(topic, 0)!.log.logEndOffset).to.equal(4);
      await second.close();
      if (crash) await first.close();
    });
  }
});
