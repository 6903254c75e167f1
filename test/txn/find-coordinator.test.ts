// FindCoordinator for transactional ids: the coordinator is the leader of the id's
// __transaction_state partition in the metadata, whichever broker that is.
import { expect } from 'chai';
import type { BrokerEndpoint } from '../../src/cluster/controller';
import { coordinatorPartitionFor } from '../../src/cluster/coordinator-partition';
import type { PartitionRecord, TopicRecord } from '../../src/cluster/metadata-store';
import { ErrorCode } from '../../src/common/errors';
import { findCoordinator, type FindCoordinatorServices } from '../../src/handlers/find-coordinator';
import type { RequestContext } from '../../src/handlers/handler';
import { ApiKey } from '../../src/protocol/generated';
import { allowAllRequest } from '../helpers/request-context';

const SELF = 1;
const TRANSACTION_KEY_TYPE = 1;
const NUM_PARTITIONS = 3;

describe('txn: FindCoordinator for transactional ids', () => {
  let topic: TopicRecord | undefined;
  let loaded: Set<number>;
  let starts: number;
  const brokers: BrokerEndpoint[] = [
    { nodeId: SELF, host: 'h1', port: 9001, rack: null },
    { nodeId: 3, host: 'h3', port: 9003, rack: null },
  ];
  const services: FindCoordinatorServices = {
    nodeId: SELF,
    controller: { topic: (name) => (name === '__transaction_state' ? topic : undefined), brokers: () => brokers },
    groups: { isLoaded: () => false },
    transactions: { isLoaded: (p) => loaded.has(p) },
    startTransactions: async () => void starts++,
    shareCoordinator: { isLoaded: () => false },
    startShareCoordinator: () => Promise.resolve(),
  };
  const handler = findCoordinator.bind(services);
  const ctx = { ...allowAllRequest, apiKey: ApiKey.FindCoordinator, apiVersion: 4 } as RequestContext;

  /** The answer for each id, as "errorCode nodeId host:port". */
  async function ask(...ids: string[]): Promise<string[]> {
    const res = await handler.handle({ key: '', keyType: TRANSACTION_KEY_TYPE, coordinatorKeys: ids }, ctx);
    return res!.coordinators.map((c) => `${c.errorCode} ${c.nodeId} ${c.host}:${c.port}`);
  }

  /** Leaders by partition index. */
  function setLeaders(...leaders: number[]): void {
    const partitions: PartitionRecord[] = leaders.map((leader, index) => ({ index, replicas: [SELF, 3], leader, leaderEpoch: 0, isr: [SELF, 3] }));
    topic = { name: '__transaction_state', id: '1'.repeat(32), partitions, configs: {} };
  }

  // Ids on partitions 0, 1, 2 of 3.
  const ids = ['t0', 't1', 't2'].map((prefix) => {
    for (let i = 0; ; i++) if (coordinatorPartitionFor(`${prefix}-${i}`, NUM_PARTITIONS) === Number(prefix[1])) return `${prefix}-${i}`;
  });

  beforeEach(() => {
    topic = undefined;
    loaded = new Set();
    starts = 0;
  });

  it('creates __transaction_state on the first ask, and answers COORDINATOR_NOT_AVAILABLE until then', async () => {
    expect(await ask(ids[0])).to.deep.equal([`${ErrorCode.COORDINATOR_NOT_AVAILABLE} -1 :-1`]);
    expect(starts).to.equal(1);
  });

  it('names the leader of each id\'s partition; none without a leader, nor while this broker, the leader, has not loaded it', async () => {
    setLeaders(3, -1, SELF);
    expect(await ask(...ids)).to.deep.equal([
      `${ErrorCode.NONE} 3 h3:9003`, `${ErrorCode.COORDINATOR_NOT_AVAILABLE} -1 :-1`, `${ErrorCode.COORDINATOR_NOT_AVAILABLE} -1 :-1`,
    ]);
    loaded.add(2);
    expect((await ask(ids[2]))[0]).to.equal(`${ErrorCode.NONE} ${SELF} h1:9001`);
    expect(starts).to.equal(0);
  });
});
