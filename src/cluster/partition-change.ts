// How a partition's leader and ISR change when brokers come and go: Kafka 4.4's KRaft
// PartitionChangeBuilder (metadata/.../controller/PartitionChangeBuilder.java: electLeader,
// tryElection, build) and the calls ReplicationControlManager makes of it on a broker's fencing or
// unfencing (generateLeaderAndIsrUpdates) and on ElectLeaders (PREFERRED), as pure functions.
//
// Not here: reassignments (adding/removing replicas), the leader recovery state Kafka sets after an
// unclean election, and KIP-966's eligible leader replicas (ELR). Kafka 4.4 enables ELR on new
// clusters; Fjord keeps the rule Kafka has with ELR off (and ZooKeeper-era Kafka had): the ISR never
// becomes empty, so the last ISR member stays in it when it dies, and comes back as the clean leader.
import type { PartitionState as StoredPartitionState } from './etcd/layout';

export const NO_LEADER = -1;

/** A partition as the controller decides about it: its stored state and its assignment (preferred leader first). */
export interface PartitionState extends StoredPartitionState {
  replicas: readonly number[];
}

/**
 * Kafka's PartitionChangeBuilder.Election: PREFERRED moves leadership to the first replica when it
 * can lead; ONLINE keeps a partition led from its ISR; UNCLEAN (unclean.leader.election.enable)
 * also takes an out-of-sync replica when no ISR member can lead, at the cost of the records only
 * the ISR had.
 */
export type Election = 'preferred' | 'online' | 'unclean';

export interface PartitionChange {
  /** The ISR this change aims at; the current one if absent. An empty one is not applied (no ELR). */
  targetIsr?: readonly number[];
  election: Election;
  /** Whether a replica may lead: alive (registered, unfenced, not shutting down). */
  isAcceptableLeader: (brokerId: number) => boolean;
}

/**
 * PartitionChangeBuilder.build(): the partition after an election over the target ISR, or null
 * when nothing changes. The leader epoch goes up when the leader changes (to -1 included), the
 * partition epoch on every change (Kafka's ISR shrinks no longer bump the leader epoch since 3.6).
 */
export function changePartition(state: PartitionState, change: PartitionChange): PartitionState | null {
  const targetIsr = change.targetIsr ?? state.isr;
  const { leader, unclean } = electLeader(state, targetIsr, change.election, change.isAcceptableLeader);
  let isr = state.isr;
  // An unclean leader starts a new ISR of its own: what the old ISR had beyond its log is lost.
  if (leader !== state.leader && unclean) isr = [leader];
  else if (targetIsr.length > 0 && !sameList(targetIsr, state.isr)) isr = [...targetIsr];
  if (leader === state.leader && isr === state.isr) return null;
  return {
    replicas: state.replicas,
    leader,
    leaderEpoch: leader === state.leader ? state.leaderEpoch : state.leaderEpoch + 1,
    isr,
    partitionEpoch: state.partitionEpoch + 1,
  };
}

/**
 * PartitionChangeBuilder.electLeader: a leader that can stay stays (but for PREFERRED, where the
 * first replica goes first); otherwise the first replica in assignment order that is in the ISR
 * and alive; for UNCLEAN, failing that, the first alive replica; else NO_LEADER.
 */
function electLeader(state: PartitionState, targetIsr: readonly number[], election: Election,
  isAcceptableLeader: (brokerId: number) => boolean): { leader: number; unclean: boolean } {
  const isValidNewLeader = (id: number): boolean => targetIsr.includes(id) && isAcceptableLeader(id);
  const preferred = state.replicas[0];
  if (election === 'preferred' && preferred !== undefined && isValidNewLeader(preferred)) return { leader: preferred, unclean: false };
  if (isValidNewLeader(state.leader)) return { leader: state.leader, unclean: false };
  const clean = state.replicas.find(isValidNewLeader);
  if (clean !== undefined) return { leader: clean, unclean: false };
  if (election === 'unclean') {
    const unclean = state.replicas.find(isAcceptableLeader);
    if (unclean !== undefined) return { leader: unclean, unclean: true };
  }
  return { leader: NO_LEADER, unclean: false };
}

/**
 * A broker fenced or gone (its registration expired): Kafka's handleBrokerFenced and
 * handleBrokerUnregistered. It leaves the ISR unless it is the last member, and cannot lead; a
 * partition it led elects another leader, or has none.
 */
export function brokerFenced(state: PartitionState, brokerId: number, isAlive: (id: number) => boolean,
  uncleanLeaderElection: boolean): PartitionState | null {
  return changePartition(state, {
    targetIsr: state.isr.filter((id) => id !== brokerId),
    election: uncleanLeaderElection ? 'unclean' : 'online',
    isAcceptableLeader: (id) => id !== brokerId && isAlive(id),
  });
}

/**
 * A broker unfenced (back, caught up with the metadata): Kafka's handleBrokerUnfenced, which runs
 * it for the partitions without a leader. It may lead even though the caller's view of the
 * cluster may not show it alive yet.
 */
export function brokerUnfenced(state: PartitionState, brokerId: number, isAlive: (id: number) => boolean,
  uncleanLeaderElection: boolean): PartitionState | null {
  return changePartition(state, {
    election: uncleanLeaderElection ? 'unclean' : 'online',
    isAcceptableLeader: (id) => id === brokerId || isAlive(id),
  });
}

/**
 * ElectLeaders with type PREFERRED for one partition: leadership back to the first replica if it is
 * alive and in the ISR. Null when nothing changes: Kafka answers ELECTION_NOT_NEEDED when the
 * preferred replica already leads, else PREFERRED_LEADER_NOT_AVAILABLE.
 */
export function preferredLeaderElection(state: PartitionState, isAlive: (id: number) => boolean): PartitionState | null {
  return changePartition(state, { election: 'preferred', isAcceptableLeader: isAlive });
}

/** ElectLeaders' election types (Kafka's ElectionType: PREFERRED = 0, UNCLEAN = 1). */
export type RequestedElection = 'preferred' | 'unclean';

/**
 * ElectLeaders for one partition (Kafka's ReplicationControlManager.electLeader): 'not-needed' when
 * the preferred replica already leads (PREFERRED) or the partition has a leader (UNCLEAN);
 * 'not-possible' when the election changes nothing (no live ISR member, and for UNCLEAN no live
 * replica at all); else the partition's next state. PREFERRED falls back on another live ISR
 * member for a leaderless partition, as Kafka's PartitionChangeBuilder does.
 */
export function requestedElection(state: PartitionState, type: RequestedElection,
  isAlive: (id: number) => boolean): PartitionState | 'not-needed' | 'not-possible' {
  if (type === 'preferred' ? state.leader === state.replicas[0] : state.leader !== NO_LEADER) return 'not-needed';
  const next = type === 'preferred'
    ? preferredLeaderElection(state, isAlive)
    : changePartition(state, { election: 'unclean', isAcceptableLeader: isAlive });
  return next ?? 'not-possible';
}

/** Whether an elected leader was out of sync: what only the old ISR had is lost. */
export function isUncleanElection(before: Pick<PartitionState, 'leader' | 'isr'>, after: Pick<PartitionState, 'leader'>): boolean {
  return after.leader !== NO_LEADER && after.leader !== before.leader && !before.isr.includes(after.leader);
}

function sameList(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
