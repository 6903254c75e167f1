// A transaction version 2 producer across a broker restart: __transaction_state holds its state at
// value version 1 (the bumped epoch, the client's version), so the restarted coordinator goes on
// with the epoch EndTxn answered and the transaction left open.
import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { startBroker, type RunningBroker } from '../../src/broker';
import { ErrorCode } from '../../src/common/errors';
import { ApiKey } from '../../src/protocol/generated';
import type { EndTxnResponse } from '../../src/protocol/generated/EndTxnResponse';
import type { FindCoordinatorResponse } from '../../src/protocol/generated/FindCoordinatorResponse';
import type { InitProducerIdResponse } from '../../src/protocol/generated/InitProducerIdResponse';
import type { ProduceResponse } from '../../src/protocol/generated/ProduceResponse';
import { buildBatchSync, decodeRecords } from '../../src/records/records';
import { replayBatches } from '../../src/storage/replay';
import { decodeTransactionLogValue } from '../../src/txn/transaction-log-records';
import { TRANSACTION_STATE_TOPIC } from '../../src/txn/transaction-state-log';
import { RawClient } from '../helpers/raw-client';

describe('transactions, transaction version 2, across a restart', function () {
  this.timeout(60000);
  let dataDir: string;
  before(async () => { dataDir = await mkdtemp(path.join(os.tmpdir(), 'fjord-tv2-restart-')); });
  after(async () => { await rm(dataDir, { recursive: true, force: true }); });

  async function start(): Promise<{ running: RunningBroker; raw: RawClient }> {
    const running = await startBroker({ dataDir, logLevel: 'silent', config: { 'transaction.state.log.num.partitions': '1' } });
    const raw = await RawClient.connect(running.port);
    for (let i = 0; i < 400; i++) {
      const found = await raw.request<FindCoordinatorResponse>(ApiKey.FindCoordinator, 3, { key: 'r', keyType: 1, coordinatorKeys: [] });
      if (found.errorCode === ErrorCode.NONE && running.broker.transactions.isLoaded(0)) break;
      await new Promise((r) => setTimeout(r, 25));
    }
    return { running, raw };
  }

  const produce = async (raw: RawClient, producerId: bigint, producerEpoch: number, value: string) => {
    const records = buildBatchSync({ producerId: Number(producerId), producerEpoch, baseSequence: 0, isTransactional: true, records: [{ value }] });
    const res = await raw.request<ProduceResponse>(ApiKey.Produce, 12, {
      transactionalId: 'r', acks: -1, timeoutMs: 1000, topicData: [{ name: 'rt', partitionData: [{ index: 0, records }] }],
    });
    return res.responses[0].partitionResponses[0].errorCode;
  };
  const endTxn = async (raw: RawClient, producerId: bigint, producerEpoch: number, committed: boolean) => {
    const res = await raw.request<EndTxnResponse>(ApiKey.EndTxn, 5, { transactionalId: 'r', producerId, producerEpoch, committed });
    return [res.errorCode, res.producerEpoch];
  };

  it('goes on with the bumped epoch and the open transaction after a restart', async () => {
    const first = await start();
    await first.running.broker.controller.createTopic({ name: 'rt', numPartitions: 1, replicationFactor: 1, assignments: [], configs: {} }, false);
    const init = await first.raw.request<InitProducerIdResponse>(ApiKey.InitProducerId, 5, {
      transactionalId: 'r', transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1,
    });
    const pid = init.producerId!;
    expect(await produce(first.raw, pid, 0, 'one')).to.equal(ErrorCode.NONE);
    expect(await endTxn(first.raw, pid, 0, true)).to.deep.equal([ErrorCode.NONE, 1]);
    expect(await produce(first.raw, pid, 1, 'two')).to.equal(ErrorCode.NONE);
    // What the log holds: value version 1, with the client's transaction version.
    const log = first.running.broker.replicas.partition(TRANSACTION_STATE_TOPIC, 0)!.log;
    const values: Buffer[] = [];
    await replayBatches(log, async (bytes) => {
      for (const r of await decodeRecords(bytes)) if (r.value) values.push(r.value);
    });
    const last = values[values.length - 1];
    expect(last.readInt16BE(0)).to.equal(1);
    expect(decodeTransactionLogValue(last)).to.include({ producerEpoch: 1, clientTransactionVersion: 2, previousProducerId: Number(pid) });
    first.raw.close();
    await first.running.close();

    const second = await start();
    try {
      expect(second.running.broker.transactions.describe('r')).to.include({ state: 'Ongoing', producerEpoch: 1 });
      expect(await produce(second.raw, pid, 0, 'late')).to.equal(ErrorCode.INVALID_PRODUCER_EPOCH);
      expect(await endTxn(second.raw, pid, 1, true)).to.deep.equal([ErrorCode.NONE, 2]);
      expect(await endTxn(second.raw, pid, 1, true)).to.deep.equal([ErrorCode.NONE, 2]);
    } finally {
      second.raw.close();
      await second.running.close();
    }
  });
});
