// The reconciliation of a streams group member (Kafka's streams CurrentAssignmentBuilder): given
// the member as it is and its target tasks, its next state.
// - The member first revokes what it must give up: it stays in its epoch, in UNREVOKED_TASKS,
//   until its heartbeat's owned tasks no longer list them.
// - Then it moves to the target epoch and gets the tasks of its target that are free: an active
//   task once no member owns it as active and no member of its own process holds it as standby or
//   warm-up; a standby or warm-up task once its process holds it in no other role. Those not free
//   yet wait (UNRELEASED_TASKS) and come on a later heartbeat. So an active task never has two owners.
import {
  StreamsMemberState, containsAnyTask, type StreamsGroupMember, type TaskSet, type TasksTuple,
} from './streams-member';

export interface StreamsReconciliationTarget {
  epoch: number;
  tasks: TasksTuple;
  /** The process of the task's current active owner (this member included), undefined if none. */
  activeOwnerProcess: (subtopologyId: string, partition: number) => string | undefined;
  /** The processes holding the task as standby or warm-up now. */
  standbyOrWarmupProcesses: (subtopologyId: string, partition: number) => ReadonlySet<string>;
  /** What the member's heartbeat says it owns; null when the heartbeat did not say. */
  owned: TasksTuple | null;
}

export function reconcileStreamsMember(member: StreamsGroupMember, target: StreamsReconciliationTarget): StreamsGroupMember {
  switch (member.state) {
    case StreamsMemberState.Stable:
      return member.memberEpoch === target.epoch ? member : computeNextAssignment(member, target);
    case StreamsMemberState.UnrevokedTasks:
      if (target.owned === null || containsAnyTask(target.owned, member.pendingRevocation)) return member;
      return computeNextAssignment(member, target);
    case StreamsMemberState.UnreleasedTasks:
      return computeNextAssignment(member, target);
  }
}

interface Difference {
  kept: Map<string, Set<number>>;
  revoked: Map<string, Set<number>>;
  toAssign: Map<string, Set<number>>;
  hasUnreleased: boolean;
}

/** Current ∩ target is kept, current − target revoked, target − current assigned unless `unreleased`. */
function difference(current: TaskSet, wanted: TaskSet, unreleased: (s: string, p: number) => boolean): Difference {
  const d: Difference = { kept: new Map(), revoked: new Map(), toAssign: new Map(), hasUnreleased: false };
  const add = (m: Map<string, Set<number>>, s: string, p: number) => m.set(s, (m.get(s) ?? new Set()).add(p));
  for (const s of new Set([...current.keys(), ...wanted.keys()])) {
    const have = current.get(s) ?? new Set<number>();
    const want = wanted.get(s) ?? new Set<number>();
    for (const p of have) add(want.has(p) ? d.kept : d.revoked, s, p);
    for (const p of want) {
      if (have.has(p)) continue;
      if (unreleased(s, p)) d.hasUnreleased = true;
      else add(d.toAssign, s, p);
    }
  }
  return d;
}

function merge(a: TaskSet, b: TaskSet): Map<string, Set<number>> {
  const merged = new Map([...a].map(([s, ps]) => [s, new Set(ps)]));
  for (const [s, ps] of b) for (const p of ps) merged.set(s, (merged.get(s) ?? new Set()).add(p));
  return merged;
}

function computeNextAssignment(member: StreamsGroupMember, target: StreamsReconciliationTarget): StreamsGroupMember {
  const process = member.processId;
  const heldByProcessElsewhere = (s: string, p: number) => target.standbyOrWarmupProcesses(s, p).has(process);
  const active = difference(member.assigned.active, target.tasks.active,
    (s, p) => target.activeOwnerProcess(s, p) !== undefined || heldByProcessElsewhere(s, p));
  const standbyUnreleased = (s: string, p: number) => target.activeOwnerProcess(s, p) === process || heldByProcessElsewhere(s, p);
  const standby = difference(member.assigned.standby, target.tasks.standby, standbyUnreleased);
  const warmup = difference(member.assigned.warmup, target.tasks.warmup, standbyUnreleased);

  const pendingRevocation: TasksTuple = { active: active.revoked, standby: standby.revoked, warmup: warmup.revoked };
  const kept: TasksTuple = { active: active.kept, standby: standby.kept, warmup: warmup.kept };
  const hasRevocations = active.revoked.size + standby.revoked.size + warmup.revoked.size > 0;
  if (hasRevocations && (target.owned === null || containsAnyTask(target.owned, pendingRevocation))) {
    return {
      ...member, state: StreamsMemberState.UnrevokedTasks, previousMemberEpoch: member.memberEpoch,
      assigned: kept, pendingRevocation,
    };
  }
  const hasUnreleased = active.hasUnreleased || standby.hasUnreleased || warmup.hasUnreleased;
  return {
    ...member,
    state: hasUnreleased ? StreamsMemberState.UnreleasedTasks : StreamsMemberState.Stable,
    memberEpoch: target.epoch, previousMemberEpoch: member.memberEpoch,
    assigned: { active: merge(kept.active, active.toAssign), standby: merge(kept.standby, standby.toAssign), warmup: merge(kept.warmup, warmup.toAssign) },
    pendingRevocation: { active: new Map(), standby: new Map(), warmup: new Map() },
  };
}
