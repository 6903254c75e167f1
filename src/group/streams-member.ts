// One member of a streams group (KIP-1071, Kafka's StreamsGroupMember): the Kafka Streams client
// (process) it belongs to, its endpoint for interactive queries, its epochs, where its
// reconciliation stands, and its tasks. A task is a subtopology and a partition; a member has
// active, standby and warm-up tasks. Members are immutable values, as consumer group members.
export { JOIN_EPOCH, LEAVE_EPOCH, STATIC_LEAVE_EPOCH } from './consumer-member';

/** Partitions (task numbers) by subtopology id. */
export type TaskSet = ReadonlyMap<string, ReadonlySet<number>>;

/** Kafka's TasksTuple: a member's tasks of each kind. */
export interface TasksTuple {
  readonly active: TaskSet;
  readonly standby: TaskSet;
  readonly warmup: TaskSet;
}

export const NO_TASKS: TasksTuple = { active: new Map(), standby: new Map(), warmup: new Map() };

/** Kafka's streams MemberState (./streams-records.ts has the int8 its records carry). */
export enum StreamsMemberState {
  /** Must revoke tasks before it gets anything new. */
  UnrevokedTasks = 'unrevoked_tasks',
  /** At the target epoch, waiting for tasks other members still own. */
  UnreleasedTasks = 'unreleased_tasks',
  Stable = 'stable',
}

export interface Endpoint {
  readonly host: string;
  readonly port: number;
}

export interface StreamsGroupMember {
  readonly memberId: string;
  readonly instanceId: string | null;
  readonly rackId: string | null;
  readonly clientId: string;
  readonly clientHost: string;
  readonly rebalanceTimeoutMs: number;
  /** The topology epoch the member joined with. */
  readonly topologyEpoch: number;
  /** The Kafka Streams client the member is a thread of: tasks of one process never go to it twice. */
  readonly processId: string;
  readonly userEndpoint: Endpoint | null;
  /** Sorted by key. */
  readonly clientTags: readonly { key: string; value: string }[];
  readonly memberEpoch: number;
  readonly previousMemberEpoch: number;
  readonly state: StreamsMemberState;
  readonly assigned: TasksTuple;
  readonly pendingRevocation: TasksTuple;
}

export function newStreamsMember(memberId: string): StreamsGroupMember {
  return {
    memberId, instanceId: null, rackId: null, clientId: '', clientHost: '', rebalanceTimeoutMs: -1, topologyEpoch: 0,
    processId: '', userEndpoint: null, clientTags: [], memberEpoch: 0, previousMemberEpoch: 0, state: StreamsMemberState.Stable,
    assigned: NO_TASKS, pendingRevocation: NO_TASKS,
  };
}

function sameTaskSet(a: TaskSet, b: TaskSet): boolean {
  if (a.size !== b.size) return false;
  for (const [subtopologyId, partitions] of a) {
    const other = b.get(subtopologyId);
    if (!other || other.size !== partitions.size) return false;
    for (const p of partitions) if (!other.has(p)) return false;
  }
  return true;
}

export function sameTasks(a: TasksTuple, b: TasksTuple): boolean {
  return sameTaskSet(a.active, b.active) && sameTaskSet(a.standby, b.standby) && sameTaskSet(a.warmup, b.warmup);
}

/** Whether `tasks` holds any task of `of` (of any kind, each against the same kind). */
export function containsAnyTask(tasks: TasksTuple, of: TasksTuple): boolean {
  const any = (a: TaskSet, b: TaskSet) => [...b].some(([s, ps]) => [...ps].some((p) => a.get(s)?.has(p) ?? false));
  return any(tasks.active, of.active) || any(tasks.standby, of.standby) || any(tasks.warmup, of.warmup);
}

/** Whether every task of `tasks` is in `of` (each kind against the same kind). */
export function isSubsetOf(tasks: TasksTuple, of: TasksTuple): boolean {
  const within = (a: TaskSet, b: TaskSet) => [...a].every(([s, ps]) => [...ps].every((p) => b.get(s)?.has(p) ?? false));
  return within(tasks.active, of.active) && within(tasks.standby, of.standby) && within(tasks.warmup, of.warmup);
}

/** Metadata the member record holds (what a change of bumps the group epoch, as Kafka's hasMemberChanged). */
export function sameMemberMetadata(a: StreamsGroupMember, b: StreamsGroupMember): boolean {
  return a.instanceId === b.instanceId && a.rackId === b.rackId && a.clientId === b.clientId && a.clientHost === b.clientHost &&
    a.rebalanceTimeoutMs === b.rebalanceTimeoutMs && a.topologyEpoch === b.topologyEpoch && a.processId === b.processId &&
    a.userEndpoint?.host === b.userEndpoint?.host && a.userEndpoint?.port === b.userEndpoint?.port &&
    a.clientTags.length === b.clientTags.length && a.clientTags.every((t, i) => t.key === b.clientTags[i].key && t.value === b.clientTags[i].value);
}

/** As the protocol carries them: each subtopology's partitions, sorted, subtopologies sorted. */
export function taskSetToWire(tasks: TaskSet): { subtopologyId: string; partitions: number[] }[] {
  return [...tasks].filter(([, ps]) => ps.size > 0).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([subtopologyId, ps]) => ({ subtopologyId, partitions: [...ps].sort((x, y) => x - y) }));
}

export function taskSetFromWire(tasks: readonly { subtopologyId: string; partitions: number[] }[]): TaskSet {
  const set = new Map<string, Set<number>>();
  for (const t of tasks) {
    const ps = set.get(t.subtopologyId) ?? new Set<number>();
    for (const p of t.partitions) ps.add(p);
    set.set(t.subtopologyId, ps);
  }
  return set;
}
