// FindCoordinator for groups (src/handlers/find-coordinator.ts) over a made-up metadata: the
// coordinator is the leader of the group's __consumer_offsets partition, as Kafka's getCoordinator
// answers; COORDINATOR_NOT_AVAILABLE without topic, leader or live leader, and while this broker
// leads the partition but has not loaded it.
import { expect } from 'chai';
import type { BrokerEndpoint } from '../../src/cluster/controller';
import { coordinatorPartitionFor } from '../../src/cluster/coordinator-partition';
import type { PartitionRecord, TopicRecord } from '../../src/cluster/metadata-store';
import { ErrorCode } from '../../src/common/errors';
import type { RequestContext } from '../../src/handlers/handler';
import { findCoordinator, type FindCoordinatorServices } from '../../src/handlers/find-coordinator';
import { allowAllRequest } from '../helpers/request-context';

const SELF = 1;
const BROKERS: BrokerEndpoint[] = [
  { nodeId: 1, host: 'b1', port: 9001, rack: null },
  { nodeId: 2, host: 'b2', port: 9002, rack: null },
];
const PARTITIONS = 3;
const groupOn = (partition: number): string => Array.from({ length: 100 }, (_, i) => `group-${i}`)
  .find((id) => coordinatorPartitionFor(id, PARTITIONS) === partition)!;

function offsetsTopic(leaders: number[]): TopicRecord {
  const partitions: PartitionRecord[] = leaders.map((leader, index) => ({ index, replicas: [1, 2], leader, leaderEpoch: 0, isr: [1, 2] }));
  return { name: '__consumer_offsets', id: 'a'.repeat(32), partitions, configs: {} };
}

async function ask(topic: TopicRecord | undefined, loaded: number[], keys: string[]) {
  const services: FindCoordinatorServices = {
    nodeId: SELF,
    controller: { topic: () => topic, brokers: () => BROKERS },
    groups: { isLoaded: (p) => loaded.includes(p) },
    transactions: { isLoaded: () => false },
    startTransactions: () => Promise.resolve(),
    shareCoordinator: { isLoaded: () => false },
    startShareCoordinator: () => Promise.resolve(),
  };
  const ctx = { ...allowAllRequest, apiVersion: 4 } as RequestContext;
  const res = await findCoordinator.bind(services).handle({ key: '', keyType: 0, coordinatorKeys: keys }, ctx);
  return res!.coordinators.map((c) => [c.key, c.errorCode, c.nodeId, c.host, c.port]);
}

describe('FindCoordinator for groups: the leader of the group\'s __consumer_offsets partition', () => {
  const [g0, g1, g2] = [0, 1, 2].map(groupOn);
  const NA = ErrorCode.COORDINATOR_NOT_AVAILABLE;

  it('names each partition\'s leader; no leader or a leader not among the live brokers is COORDINATOR_NOT_AVAILABLE', async () => {
    expect(await ask(offsetsTopic([2, -1, 7]), [], [g0, g1, g2])).to.deep.equal([
      [g0, 0, 2, 'b2', 9002],
      [g1, NA, -1, '', -1],
      [g2, NA, -1, '', -1],
    ]);
  });

  it('this broker as leader once it has loaded the partition; COORDINATOR_NOT_AVAILABLE until then', async () => {
    expect(await ask(offsetsTopic([1, 1, 2]), [1], [g0, g1])).to.deep.equal([
      [g0, NA, -1, '', -1],
      [g1, 0, 1, 'b1', 9001],
    ]);
  });

  it('without __consumer_offsets: COORDINATOR_NOT_AVAILABLE', async () => {
    expect(await ask(undefined, [], [g0])).to.deep.equal([[g0, NA, -1, '', -1]]);
  });
});
