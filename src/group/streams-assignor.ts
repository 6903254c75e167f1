// The `sticky` task assignor of streams groups (Kafka's StickyTaskAssignor, without rack awareness
// and warm-up tasks): every task of every subtopology goes to one member as active, and
// `numStandbyReplicas` times as standby to members of other processes (Kafka Streams clients).
// - Sticky: an active task stays with its previous owner, then goes to a member that had it as
//   standby (its state is there), as long as that member has not reached its share of the tasks.
// - Balanced: the rest go to the least loaded process, and within it the least loaded member, so
//   members end within one task of each other (processes in proportion to their members).
// - A standby never lands on a process that has the task active (or another standby of it); there
//   too previous owners come first, then the least loaded.
import type { TaskSet, TasksTuple } from './streams-member';

export interface AssignorMember {
  readonly processId: string;
  /** The member's target assignment before this one. */
  readonly previous: TasksTuple;
}

export interface AssignorInput {
  readonly members: ReadonlyMap<string, AssignorMember>;
  /** Each subtopology's number of tasks (its source topics' partitions). */
  readonly subtopologies: ReadonlyMap<string, number>;
  readonly numStandbyReplicas: number;
}

const byId = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

export function assignTasks(input: AssignorInput): Map<string, TasksTuple> {
  const memberIds = [...input.members.keys()].sort(byId);
  const active = new Map(memberIds.map((id) => [id, new Map<string, Set<number>>()]));
  const standby = new Map(memberIds.map((id) => [id, new Map<string, Set<number>>()]));
  const result = new Map<string, TasksTuple>();
  if (memberIds.length === 0) return result;

  const tasks: [string, number][] = [];
  for (const [s, n] of [...input.subtopologies].sort(([a], [b]) => byId(a, b))) for (let p = 0; p < n; p++) tasks.push([s, p]);
  const load = new Map(memberIds.map((id) => [id, 0]));
  const processOf = (id: string) => input.members.get(id)!.processId;
  const processMembers = new Map<string, number>();
  for (const id of memberIds) processMembers.set(processOf(id), (processMembers.get(processOf(id)) ?? 0) + 1);
  const processLoad = (process: string) => memberIds.filter((id) => processOf(id) === process).reduce((n, id) => n + load.get(id)!, 0);
  const quota = Math.ceil(tasks.length / memberIds.length);
  const give = (into: Map<string, Map<string, Set<number>>>, id: string, s: string, p: number) => {
    const set = into.get(id)!;
    set.set(s, (set.get(s) ?? new Set()).add(p));
    load.set(id, load.get(id)! + 1);
  };
  const had = (set: TaskSet, s: string, p: number) => set.get(s)?.has(p) ?? false;

  // Active tasks: previous owners, then previous standbys, within the quota; then the least loaded.
  const unassigned: [string, number][] = [];
  for (const [s, p] of tasks) {
    const owner = memberIds.find((id) => had(input.members.get(id)!.previous.active, s, p) && load.get(id)! < quota) ??
      memberIds.find((id) => had(input.members.get(id)!.previous.standby, s, p) && load.get(id)! < quota);
    if (owner !== undefined) give(active, owner, s, p);
    else unassigned.push([s, p]);
  }
  for (const [s, p] of unassigned) give(active, leastLoaded(memberIds, load, processOf, processLoad, processMembers), s, p);

  // Standby tasks: on processes without the task, previous standby owners first, then the least loaded.
  for (let replica = 0; replica < input.numStandbyReplicas; replica++) {
    for (const [s, p] of tasks) {
      const holding = new Set(memberIds.filter((id) => had(active.get(id)!, s, p) || had(standby.get(id)!, s, p)).map(processOf));
      const candidates = memberIds.filter((id) => !holding.has(processOf(id)));
      if (candidates.length === 0) continue; // fewer processes than replicas: Kafka leaves the rest unassigned too
      const previous = candidates.find((id) => had(input.members.get(id)!.previous.standby, s, p));
      give(standby, previous ?? leastLoaded(candidates, load, processOf, processLoad, processMembers), s, p);
    }
  }

  for (const id of memberIds) result.set(id, { active: active.get(id)!, standby: standby.get(id)!, warmup: new Map() });
  return result;
}

/** The member of the least loaded process (load per member), then the least loaded member in it; ties by id. */
function leastLoaded(candidates: readonly string[], load: ReadonlyMap<string, number>, processOf: (id: string) => string,
  processLoad: (process: string) => number, processMembers: ReadonlyMap<string, number>): string {
  let best = candidates[0];
  const key = (id: string) => [processLoad(processOf(id)) / processMembers.get(processOf(id))!, load.get(id)!];
  for (const id of candidates.slice(1)) {
    const [a1, a2] = key(id);
    const [b1, b2] = key(best);
    if (a1 < b1 || (a1 === b1 && a2 < b2)) best = id;
  }
  return best;
}
