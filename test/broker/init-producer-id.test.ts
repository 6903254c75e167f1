import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { ApiKey } from '../../src/protocol/generated';
import type { InitProducerIdResponse } from '../../src/protocol/generated/InitProducerIdResponse';
import { ErrorCode } from '../../src/common/errors';
import { startBroker, type RunningBroker } from '../../src/broker';
import { RawClient } from '../helpers/raw-client';

describe('InitProducerId', function () {
  this.timeout(20000);
  let dataDir: string;
  let running: RunningBroker | undefined;
  before(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'fjord-init-producer-id-'));
  });
  after(async () => {
    await running?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  async function init(c: RawClient, version: number, body: { transactionalId?: string | null; transactionTimeoutMs?: number; producerId?: bigint; producerEpoch?: number } = {}) {
    const res = await c.request<InitProducerIdResponse>(ApiKey.InitProducerId, version, {
      transactionalId: null, transactionTimeoutMs: 60000, producerId: -1n, producerEpoch: -1, ...body,
    });
    return [res.errorCode, Number(res.producerId), res.producerEpoch];
  }

  it('gives idempotent producers ids never handed out before, across restarts', async () => {
    const ids: number[] = [];
    for (let run = 0; run < 2; run++) {
      running = await startBroker({ dataDir, logLevel: 'silent' });
      const c = await RawClient.connect(running.port);
      try {
        for (let v = 0; v <= 5; v++) {
          const [errorCode, id, epoch] = await init(c, v);
          expect([errorCode, epoch]).to.deep.equal([ErrorCode.NONE, 0]);
          expect(id).to.be.at.least(0);
          expect(ids, `id ${id} handed out twice`).to.not.include(id);
          if (ids.length > 0) expect(id).to.be.greaterThan(ids[ids.length - 1]);
          ids.push(id);
        }
      } finally {
        c.close();
        await running.close();
        running = undefined;
      }
    }
    expect(ids).to.have.length(12);
  });

  it('gives a new id to a producer that presents its old one (KIP-360), and checks the pair', async () => {
    running = await startBroker({ dataDir, logLevel: 'silent' });
    const c = await RawClient.connect(running.port);
    const [, first] = await init(c, 4);
    const [errorCode, second, epoch] = await init(c, 4, { producerId: BigInt(first), producerEpoch: 3 });
    expect([errorCode, epoch]).to.deep.equal([ErrorCode.NONE, 0]);
    expect(second).to.not.equal(first);
    expect(await init(c, 3, { producerId: -1n, producerEpoch: 3 })).to.deep.equal([ErrorCode.INVALID_REQUEST, -1, -1]);
    expect(await init(c, 5, { producerId: BigInt(first), producerEpoch: -1 })).to.deep.equal([ErrorCode.INVALID_REQUEST, -1, -1]);
    c.close();
  });

  it('sends transactional ids to the transaction coordinator, after Kafka\'s own checks', async () => {
    const c = await RawClient.connect(running!.port);
    // Before a FindCoordinator has created __transaction_state, this broker coordinates no id.
    expect(await init(c, 4, { transactionalId: 'tx-1' })).to.deep.equal([ErrorCode.NOT_COORDINATOR, -1, -1]);
    await running!.broker.startTransactions();
    const [errorCode, producerId, epoch] = await init(c, 0, { transactionalId: 'tx-1' });
    expect([errorCode, epoch]).to.deep.equal([ErrorCode.NONE, 0]);
    expect(await init(c, 4, { transactionalId: 'tx-1' })).to.deep.equal([ErrorCode.NONE, producerId, 1]);
    expect(await init(c, 4, { transactionalId: '' })).to.deep.equal([ErrorCode.INVALID_REQUEST, -1, -1]);
    expect(await init(c, 4, { transactionalId: 'tx-1', transactionTimeoutMs: 900001 })).to.deep.equal([ErrorCode.INVALID_TRANSACTION_TIMEOUT, -1, -1]);
    expect(await init(c, 4, { transactionalId: 'tx-1', transactionTimeoutMs: 0 })).to.deep.equal([ErrorCode.INVALID_TRANSACTION_TIMEOUT, -1, -1]);
    // The timeout means nothing without a transactional id.
    expect((await init(c, 4, { transactionTimeoutMs: 900001 }))[0]).to.equal(ErrorCode.NONE);
    c.close();
  });

  it('serves a kafkajs idempotent producer', async () => {
    const kafka = new Kafka({ brokers: [running!.bootstrap], clientId: 'idempotent-test', logLevel: logLevel.NOTHING });
    const admin = kafka.admin();
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await Promise.all([admin.connect(), producer.connect()]);
    try {
      await admin.createTopics({ topics: [{ topic: 'idem', numPartitions: 1 }] });
      await producer.send({ topic: 'idem', messages: [{ value: 'a' }, { value: 'b' }] });
      await producer.send({ topic: 'idem', messages: [{ value: 'c' }] });
      const producers = running!.broker.replicas.partition('idem', 0)!.log.producerState.activeProducers();
      expect(producers.size).to.equal(1);
      expect([...producers.keys()][0]).to.be.at.least(0);
      expect(running!.broker.replicas.partition('idem', 0)!.log.logEndOffset).to.equal(3);
    } finally {
      await Promise.all([admin.disconnect(), producer.disconnect()]);
    }
  });
});
