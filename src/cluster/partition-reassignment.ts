// Partition reassignment (KIP-455) as Kafka 4.4's KRaft controller runs it, as pure functions:
// ReplicationControlManager.changePartitionReassignment / cancelPartitionReassignment,
// PartitionReassignmentReplicas, PartitionReassignmentRevert and PartitionChangeBuilder's
// completeReassignmentIfNeeded.
//
// A reassignment goes in two steps. Starting it widens the replica set to the target followed by
// the replicas being removed, and records which are being added and removed (the ISR and leader do
// not change). Once every adding replica is in the ISR, and the ISR without the removing ones is
// not empty, it completes: the replica set becomes the target, the ISR drops the removed replicas,
// the leader moves if it was one of them (else its epoch still goes up when a replica leaves, as
// Kafka's triggerLeaderEpochBumpForReplicaReassignmentIfNeeded has it). A reassignment that adds
// nothing (only removes or reorders) completes as it starts when its ISR allows.
import type { PartitionReassignment } from './etcd/layout';
import { changePartition, type PartitionState } from './partition-change';

export type { PartitionReassignment } from './etcd/layout';

/** A partition's replica set and its reassignment in progress, if any. */
export interface ReplicaAssignment {
  replicas: readonly number[];
  reassignment: PartitionReassignment | null;
}

/** Kafka's isReassignmentInProgress. */
export function reassignmentInProgress(r: PartitionReassignment | null | undefined): r is PartitionReassignment {
  return r != null && (r.adding.length > 0 || r.removing.length > 0);
}

/**
 * Kafka's changePartitionReassignment over PartitionReassignmentReplicas: the assignment that starts
 * a reassignment of `current` (its full replica set, with the reassignment in progress if any)
 * towards `target`. The replicas become the target followed by those being removed; the adding and
 * removing lists are the differences, in ascending order (Kafka's TreeSets), each kept from the
 * reassignment in progress where the new one leaves it empty (as Kafka's builder keeps them). Null
 * when nothing changes.
 */
export function startReassignment(current: ReplicaAssignment, target: readonly number[]): ReplicaAssignment | null {
  const ascending = (ids: number[]): number[] => [...new Set(ids)].sort((a, b) => a - b);
  const removing = ascending(current.replicas.filter((id) => !target.includes(id)));
  const adding = ascending(target.filter((id) => !current.replicas.includes(id)));
  const replicas = [...target, ...removing];
  const reassignment = {
    adding: adding.length > 0 ? adding : [...(current.reassignment?.adding ?? [])],
    removing: removing.length > 0 ? removing : [...(current.reassignment?.removing ?? [])],
  };
  const next = { replicas, reassignment: reassignmentInProgress(reassignment) ? reassignment : null };
  return sameAssignment(current, next) ? null : next;
}

function sameAssignment(a: ReplicaAssignment, b: ReplicaAssignment): boolean {
  const same = (x: readonly number[], y: readonly number[]): boolean => x.length === y.length && x.every((id, i) => id === y[i]);
  return same(a.replicas, b.replicas) && same(a.reassignment?.adding ?? [], b.reassignment?.adding ?? [])
    && same(a.reassignment?.removing ?? [], b.reassignment?.removing ?? []);
}

/**
 * The replication factor a partition has, or is heading for while reassigned (KIP-860's check when
 * allowReplicationFactorChange is false): its replicas less the ones being removed.
 */
export function targetReplicationFactor(replicas: readonly number[], reassignment: PartitionReassignment | null | undefined): number {
  return replicas.filter((id) => !reassignment?.removing.includes(id)).length;
}

/**
 * Kafka's PartitionReassignmentRevert: the replicas and ISR a cancelled reassignment goes back to
 * (the adding replicas dropped). Unclean when no ISR member is left: the first original replica
 * becomes the ISR, and Kafka refuses the cancel unless unclean leader election is enabled.
 */
export function revertReassignment(replicas: readonly number[], isr: readonly number[], reassignment: PartitionReassignment):
  { replicas: number[]; isr: number[]; unclean: boolean } {
  const original = replicas.filter((id) => !reassignment.adding.includes(id));
  const keptIsr = isr.filter((id) => !reassignment.adding.includes(id));
  return keptIsr.length > 0 ? { replicas: original, isr: keptIsr, unclean: false } : { replicas: original, isr: original.slice(0, 1), unclean: true };
}

/**
 * PartitionChangeBuilder.completeReassignmentIfNeeded followed by its election: the partition once
 * its reassignment is complete, or null while an adding replica is not in the ISR or no ISR member
 * would be left. The state's `replicas` is the new (target) set; its leader is kept if it stays in
 * the ISR and can lead, else the first target replica in the ISR that can (none: -1). The leader
 * epoch goes up when the leader changes or a replica leaves.
 */
export function completeReassignment(state: PartitionState, reassignment: PartitionReassignment,
  isAcceptableLeader: (brokerId: number) => boolean): PartitionState | null {
  if (!reassignment.adding.every((id) => state.isr.includes(id))) return null;
  const isr = state.isr.filter((id) => !reassignment.removing.includes(id));
  if (isr.length === 0) return null;
  const replicas = state.replicas.filter((id) => !reassignment.removing.includes(id));
  const changed = changePartition({ ...state, replicas }, { targetIsr: isr, election: 'online', isAcceptableLeader })
    ?? { ...state, replicas, partitionEpoch: state.partitionEpoch + 1 };
  const shrunk = replicas.length < state.replicas.length;
  const leaderEpoch = shrunk && changed.leader === state.leader ? state.leaderEpoch + 1 : changed.leaderEpoch;
  return { ...changed, leaderEpoch };
}

/**
 * The partition after its replica set was cut to `replicas` (a cancelled reassignment): ISR members
 * and a leader no longer among them go; a new leader comes from the remaining ISR (unclean: from any
 * replica that can lead). Null when the state already fits.
 */
export function fitToReplicas(state: PartitionState, isAcceptableLeader: (brokerId: number) => boolean, unclean: boolean): PartitionState | null {
  const outside = (id: number): boolean => id >= 0 && !state.replicas.includes(id);
  if (!outside(state.leader) && !state.isr.some(outside)) return null;
  const kept = state.isr.filter((id) => !outside(id));
  // No ISR member left (a cancel Kafka allowed as unclean): the first replica is, as Kafka's revert has it.
  return changePartition(state, {
    targetIsr: kept.length > 0 ? kept : state.replicas.slice(0, 1),
    election: unclean ? 'unclean' : 'online',
    isAcceptableLeader: (id) => !outside(id) && isAcceptableLeader(id),
  });
}
