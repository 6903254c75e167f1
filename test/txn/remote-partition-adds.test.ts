// The partition adds of transaction version 2 writes sent to the transactional id's coordinator on
// another broker (AddPartitionsToTxn v5, verifyOnly false), against a real broker playing the
// coordinator; and the routing between this broker's coordinator and the remote one.
import { expect } from 'chai';
import { ErrorCode } from '../../src/common/errors';
import { RemoteAddPartitionsToTxn } from '../../src/net/txn-partition-adds';
import { ApiKey } from '../../src/protocol/generated';
import type { FindCoordinatorResponse } from '../../src/protocol/generated/FindCoordinatorResponse';
import type { InitProducerIdResponse } from '../../src/protocol/generated/InitProducerIdResponse';
import { createTxnPartitionAdds, type RemotePartitionAdds } from '../../src/txn';
import { RawClient } from '../helpers/raw-client';
import { withBroker } from '../helpers/broker';

describe('txn: partition adds to a remote transaction coordinator (AddPartitionsToTxn v5)', function () {
  this.timeout(30000);
  const coordinator = withBroker({ config: { 'transaction.state.log.num.partitions': '1' } });
  let raw: RawClient;
  let adds: RemoteAddPartitionsToTxn;

  before(async () => {
    const running = coordinator.current();
    raw = await RawClient.connect(running.port);
    await running.broker.controller.createTopic({ name: 'ra', numPartitions: 2, replicationFactor: 1, assignments: [], configs: {} }, false);
    for (let i = 0; i < 200; i++) {
      const found = await raw.request<FindCoordinatorResponse>(ApiKey.FindCoordinator, 3, { key: 'x', keyType: 1, coordinatorKeys: [] });
      if (found.errorCode === ErrorCode.NONE) break;
      await new Promise((r) => setTimeout(r, 25));
    }
    const nodeId = running.broker.nodeId;
    adds = new RemoteAddPartitionsToTxn({ brokers: () => [{ nodeId, host: '127.0.0.1', port: running.port, rack: null }] },
      { clientId: 'leader-2', connectTimeoutMs: 1000, requestTimeoutMs: 2000 });
  });
  after(() => {
    raw.close();
    adds.close();
  });

  it('adds the partitions to the transaction at version 2, and passes the coordinator\'s errors on', async () => {
    const { broker: b } = coordinator.current();
    const init = await raw.request<InitProducerIdResponse>(ApiKey.InitProducerId, 5, {
      transactionalId: 'remote-a', transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1,
    });
    const pid = Number(init.producerId);
    expect(await adds.add(b.nodeId, 'remote-a', pid, 0, [{ topic: 'ra', partition: 0 }, { topic: 'ra', partition: 1 }])).to.equal(ErrorCode.NONE);
    const described = b.transactions.describe('remote-a');
    expect(described.state).to.equal('Ongoing');
    expect(described.partitions).to.have.length(2);
    expect(await adds.add(b.nodeId, 'remote-a', pid, 1, [{ topic: 'ra', partition: 0 }])).to.equal(ErrorCode.PRODUCER_FENCED);
    expect(await adds.add(b.nodeId, 'remote-a', pid, 0, [{ topic: 'nope', partition: 0 }])).to.equal(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    expect(await adds.add(b.nodeId + 7, 'remote-a', pid, 0, [{ topic: 'ra', partition: 0 }])).to.equal(ErrorCode.COORDINATOR_NOT_AVAILABLE);
  });

  it('sends the adds of one turn in one request; of two for one id, the lower epoch is fenced', async () => {
    const { broker: b } = coordinator.current();
    let requests = 0;
    const router = b.router;
    const handler = router.handler.bind(router);
    router.handler = (apiKey) => {
      if (apiKey === ApiKey.AddPartitionsToTxn) requests++;
      return handler(apiKey);
    };
    const pids: number[] = [];
    for (const id of ['remote-b', 'remote-c']) {
      const init = await raw.request<InitProducerIdResponse>(ApiKey.InitProducerId, 5, {
        transactionalId: id, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1,
      });
      pids.push(Number(init.producerId));
    }
    const answers = await Promise.all([
      adds.add(b.nodeId, 'remote-b', pids[0], 0, [{ topic: 'ra', partition: 0 }]),
      adds.add(b.nodeId, 'remote-c', pids[1], 1, [{ topic: 'ra', partition: 1 }]),
      adds.add(b.nodeId, 'remote-c', pids[1], 0, [{ topic: 'ra', partition: 0 }]),
    ]);
    router.handler = handler;
    expect(answers).to.deep.equal([ErrorCode.NONE, ErrorCode.PRODUCER_FENCED, ErrorCode.INVALID_PRODUCER_EPOCH]);
    expect(requests).to.equal(1);
    expect(b.transactions.describe('remote-b').state).to.equal('Ongoing');
  });

  it('routes an add to the broker leading the id\'s __transaction_state partition, and maps its answer for the writer', async () => {
    const { broker: b } = coordinator.current();
    const sent: number[] = [];
    const remote: RemotePartitionAdds = { add: async (coordinatorId) => (sent.push(coordinatorId), ErrorCode.CONCURRENT_TRANSACTIONS) };
    const leader = b.controller.topic('__transaction_state')!.partitions[0].leader;
    // This broker leads it: its own coordinator answers (an unknown id here).
    const local = createTxnPartitionAdds(b.transactions, leader, b.controller, remote);
    expect(await local.add('unknown-id', 1, 0, { topic: 'ra', partition: 0 })).to.equal(ErrorCode.INVALID_PRODUCER_ID_MAPPING);
    // Another broker leads it: sent there; "not now" is NOT_ENOUGH_REPLICAS for the writer.
    const elsewhere = createTxnPartitionAdds(b.transactions, leader + 1, b.controller, remote);
    expect(await elsewhere.add('unknown-id', 1, 0, { topic: 'ra', partition: 0 })).to.equal(ErrorCode.NOT_ENOUGH_REPLICAS);
    expect(sent).to.deep.equal([leader]);
  });
});
