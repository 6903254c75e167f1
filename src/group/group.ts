// One classic group's membership and state (Kafka's ClassicGroup / GroupMetadata): its members,
// the protocol votes, the generation, the leader, the members waiting for a JoinGroup or SyncGroup
// answer, its committed offsets and its pending transactional ones (TxnOffsetCommit, not visible
// until their transaction commits). It holds no timers and does no I/O: the GroupCoordinator
// decides, this class keeps the books. Every state change goes through transitionTo(), which
// refuses the transitions Kafka refuses.
import { CONSUMER_PROTOCOL_TYPE, subscribedTopics } from './consumer-protocol';
import { ErrorCode } from '../common/errors';
import { offsetKey, type TopicPartitionOffset } from './store';

/**
 * An offset with the sequence number of its write (its place in the log): of two writes of a
 * partition, the one with the higher number is the later.
 */
export interface SequencedOffset {
  offset: TopicPartitionOffset;
  seq: number;
}

export enum GroupState {
  Empty = 'Empty',
  PreparingRebalance = 'PreparingRebalance',
  CompletingRebalance = 'CompletingRebalance',
  Stable = 'Stable',
  Dead = 'Dead',
}

/** Where each state may be entered from (Kafka's validPreviousStates). */
const VALID_PREVIOUS: Record<GroupState, readonly GroupState[]> = {
  [GroupState.PreparingRebalance]: [GroupState.Stable, GroupState.CompletingRebalance, GroupState.Empty],
  [GroupState.CompletingRebalance]: [GroupState.PreparingRebalance],
  [GroupState.Stable]: [GroupState.CompletingRebalance],
  [GroupState.Dead]: [GroupState.Stable, GroupState.PreparingRebalance, GroupState.CompletingRebalance, GroupState.Empty, GroupState.Dead],
  [GroupState.Empty]: [GroupState.PreparingRebalance],
};

export interface Protocol {
  name: string;
  metadata: Buffer;
}

/** What a parked JoinGroup is answered with. */
export interface JoinResult {
  errorCode: number;
  memberId: string;
  generationId: number;
  protocolType: string | null;
  protocolName: string | null;
  leader: string;
  skipAssignment: boolean;
  members: { memberId: string; groupInstanceId: string | null; metadata: Buffer }[];
}

/** What a parked SyncGroup is answered with. */
export interface SyncResult {
  errorCode: number;
  protocolType: string | null;
  protocolName: string | null;
  assignment: Buffer;
}

export const joinError = (memberId: string, errorCode: number): JoinResult => ({
  errorCode, memberId, generationId: -1, protocolType: null, protocolName: null, leader: '', skipAssignment: false, members: [],
});

export const syncError = (errorCode: number): SyncResult => ({
  errorCode, protocolType: null, protocolName: null, assignment: Buffer.alloc(0),
});

export class GroupMember {
  /** Set while the member's JoinGroup waits for the join phase to end. */
  awaitingJoin: ((result: JoinResult) => void) | null = null;
  /** Set while the member's SyncGroup waits for the leader's assignment. */
  awaitingSync: ((result: SyncResult) => void) | null = null;
  /** Joined in this rebalance and not yet answered: its session does not protect it. */
  isNew = false;

  constructor(
    public memberId: string,
    readonly groupInstanceId: string | null,
    readonly clientId: string,
    readonly clientHost: string,
    public rebalanceTimeoutMs: number,
    public sessionTimeoutMs: number,
    readonly protocolType: string,
    public protocols: Protocol[],
    public assignment: Buffer = Buffer.alloc(0),
  ) {}

  /** The metadata the member sent for `protocol` (empty if it does not support it). */
  metadata(protocol: string): Buffer {
    return this.protocols.find((p) => p.name === protocol)?.metadata ?? Buffer.alloc(0);
  }

  /** Same protocols, in the same order, with the same metadata. */
  matches(protocols: Protocol[]): boolean {
    return protocols.length === this.protocols.length &&
      protocols.every((p, i) => p.name === this.protocols[i].name && p.metadata.equals(this.protocols[i].metadata));
  }

  /** The member's most preferred protocol among `candidates`. */
  vote(candidates: Set<string>): string {
    const choice = this.protocols.find((p) => candidates.has(p.name));
    if (!choice) throw new Error(`member ${this.memberId} supports none of the candidate protocols`);
    return choice.name;
  }
}

export class ClassicGroup {
  private _state: GroupState;
  /** The state before the current one (a join phase begun from Empty waits for the initial delay). */
  previousState: GroupState;
  /** When the state last changed (wall clock ms); -1 when unknown. */
  currentStateTimestamp: number;
  protocolType: string | null = null;
  protocolName: string | null = null;
  generationId = 0;
  leaderId: string | null = null;
  /** A member joined during the first rebalance's initial delay: wait one more delay. */
  newMemberAdded = false;

  /** In join order: the first one left leads when the leader goes. */
  readonly members = new Map<string, GroupMember>();
  /** group.instance.id -> member id. */
  private readonly staticMembers = new Map<string, string>();
  /** Member ids handed out with MEMBER_ID_REQUIRED, not yet joined (KIP-394). */
  private readonly pendingMembers = new Set<string>();
  /** Members given a join answer this generation that have not sent SyncGroup yet. */
  readonly pendingSync = new Set<string>();
  private numAwaitingJoin = 0;
  /** Protocol name -> how many members support it. */
  private readonly protocolSupport = new Map<string, number>();
  /** Topics the members subscribe to (consumer protocol only); null when unknown. */
  private subscribed: Set<string> | null = null;

  /** Committed offsets by `${topic}:${partition}`. */
  readonly offsets = new Map<string, TopicPartitionOffset>();
  /** Per offset key, the sequence number of the newest commit applied (a later write wins). */
  readonly offsetSeq = new Map<string, number>();
  /** Per offset key, commits written but not yet acknowledged: retention leaves these alone. */
  readonly pendingCommits = new Map<string, number>();
  /**
   * Transactional offsets in the log whose transaction has not ended, by producer id, then offset
   * key (the producer's latest write of the partition). Committed offsets once the COMMIT marker
   * is written, gone with an ABORT.
   */
  readonly pendingTxnOffsets = new Map<number, Map<string, SequencedOffset>>();

  constructor(readonly groupId: string, initialState: GroupState, private readonly now: () => number) {
    this._state = initialState;
    this.previousState = initialState;
    this.currentStateTimestamp = now();
  }

  get state(): GroupState {
    return this._state;
  }

  is(state: GroupState): boolean {
    return this._state === state;
  }

  transitionTo(state: GroupState): void {
    if (!VALID_PREVIOUS[state].includes(this._state)) {
      throw new Error(`group ${this.groupId} cannot move from ${this._state} to ${state}`);
    }
    this.previousState = this._state;
    this._state = state;
    this.currentStateTimestamp = this.now();
  }

  canRebalance(): boolean {
    return VALID_PREVIOUS[GroupState.PreparingRebalance].includes(this._state);
  }

  // ------------------------------------------------------------------ offsets

  /** Makes `o` the committed offset of its partition, unless a later write of it is already applied. */
  applyOffset(o: SequencedOffset): void {
    const key = offsetKey(o.offset.topic, o.offset.partition);
    if ((this.offsetSeq.get(key) ?? 0) < o.seq) {
      this.offsets.set(key, o.offset);
      this.offsetSeq.set(key, o.seq);
    }
  }

  /** A tombstone written as write number `seq`: what was written of the partition before it is gone. */
  applyTombstone(key: string, seq: number): void {
    if ((this.offsetSeq.get(key) ?? 0) < seq) {
      this.offsets.delete(key);
      this.offsetSeq.set(key, seq);
    }
    for (const [producerId, pending] of this.pendingTxnOffsets) {
      const o = pending.get(key);
      if (o && o.seq < seq) pending.delete(key);
      if (pending.size === 0) this.pendingTxnOffsets.delete(producerId);
    }
  }

  addPendingTxnOffset(producerId: number, o: SequencedOffset): void {
    let pending = this.pendingTxnOffsets.get(producerId);
    if (!pending) this.pendingTxnOffsets.set(producerId, (pending = new Map()));
    const key = offsetKey(o.offset.topic, o.offset.partition);
    if ((pending.get(key)?.seq ?? 0) < o.seq) pending.set(key, o);
  }

  /** Some open transaction has an offset of this partition (OffsetFetch require_stable: UNSTABLE_OFFSET_COMMIT). */
  hasPendingTxnOffset(key: string): boolean {
    for (const pending of this.pendingTxnOffsets.values()) if (pending.has(key)) return true;
    return false;
  }

  // ------------------------------------------------------------------ members

  get size(): number {
    return this.members.size;
  }

  has(memberId: string): boolean {
    return this.members.has(memberId);
  }

  get(memberId: string): GroupMember {
    const m = this.members.get(memberId);
    if (!m) throw new Error(`group ${this.groupId} has no member ${memberId}`);
    return m;
  }

  isLeader(memberId: string): boolean {
    return this.leaderId === memberId;
  }

  add(member: GroupMember, onJoin: ((result: JoinResult) => void) | null): void {
    if (member.groupInstanceId !== null) {
      if (this.staticMembers.has(member.groupInstanceId)) {
        throw new Error(`static member ${member.groupInstanceId} is already in group ${this.groupId}`);
      }
      this.staticMembers.set(member.groupInstanceId, member.memberId);
    }
    if (this.members.size === 0) this.protocolType = member.protocolType;
    if (this.leaderId === null) this.leaderId = member.memberId;
    this.members.set(member.memberId, member);
    this.countProtocols(member, 1);
    member.awaitingJoin = onJoin;
    if (onJoin) this.numAwaitingJoin++;
    this.pendingMembers.delete(member.memberId);
  }

  /** Takes a member out; a leader that goes is replaced by the first member left. */
  remove(memberId: string): GroupMember | undefined {
    const member = this.members.get(memberId);
    if (member) {
      this.members.delete(memberId);
      this.countProtocols(member, -1);
      if (member.awaitingJoin) this.numAwaitingJoin--;
      if (member.groupInstanceId !== null) this.staticMembers.delete(member.groupInstanceId);
    }
    if (this.isLeader(memberId)) this.leaderId = this.members.keys().next().value ?? null;
    this.pendingMembers.delete(memberId);
    this.pendingSync.delete(memberId);
    return member;
  }

  /** New protocols and timeouts; `onJoin` non-null parks the member in the join phase. */
  updateMember(member: GroupMember, protocols: Protocol[], rebalanceTimeoutMs: number, sessionTimeoutMs: number,
    onJoin: ((result: JoinResult) => void) | null): void {
    this.countProtocols(member, -1);
    member.protocols = protocols;
    this.countProtocols(member, 1);
    member.rebalanceTimeoutMs = rebalanceTimeoutMs;
    member.sessionTimeoutMs = sessionTimeoutMs;
    const previous = member.awaitingJoin;
    if (onJoin && !previous) this.numAwaitingJoin++;
    else if (!onJoin && previous) this.numAwaitingJoin--;
    member.awaitingJoin = onJoin;
    // Joined again while its previous JoinGroup was still parked (a retry, a pipelined request):
    // the earlier request is told to rejoin rather than left hanging.
    if (previous && onJoin && previous !== onJoin) previous(joinError(member.memberId, ErrorCode.REBALANCE_IN_PROGRESS));
  }

  /** Answers a parked JoinGroup; false when the member was not waiting. */
  completeJoin(member: GroupMember, result: JoinResult): boolean {
    const resolve = member.awaitingJoin;
    if (!resolve) return false;
    member.awaitingJoin = null;
    this.numAwaitingJoin--;
    resolve(result);
    return true;
  }

  /** Answers a parked SyncGroup; false when the member was not waiting. */
  completeSync(member: GroupMember, result: SyncResult): boolean {
    const resolve = member.awaitingSync;
    if (!resolve) return false;
    member.awaitingSync = null;
    resolve(result);
    return true;
  }

  /**
   * A static member restarted with a new member id: the same member (assignment and all) under
   * the new id. Whoever still waits under the old id is fenced.
   */
  replaceStaticMember(groupInstanceId: string, oldMemberId: string, newMemberId: string): GroupMember {
    const old = this.members.get(oldMemberId);
    if (!old) throw new Error(`cannot replace unknown member ${oldMemberId}`);
    this.members.delete(oldMemberId);
    this.completeJoin(old, joinError(oldMemberId, ErrorCode.FENCED_INSTANCE_ID));
    this.completeSync(old, syncError(ErrorCode.FENCED_INSTANCE_ID));
    const replacement = new GroupMember(newMemberId, old.groupInstanceId, old.clientId, old.clientHost,
      old.rebalanceTimeoutMs, old.sessionTimeoutMs, old.protocolType, old.protocols, old.assignment);
    this.members.set(newMemberId, replacement);
    if (this.isLeader(oldMemberId)) this.leaderId = newMemberId;
    // Still owing its SyncGroup: the new incarnation owes it instead.
    if (this.pendingSync.delete(oldMemberId)) this.pendingSync.add(newMemberId);
    this.staticMembers.set(groupInstanceId, newMemberId);
    return replacement;
  }

  staticMemberId(groupInstanceId: string): string | undefined {
    return this.staticMembers.get(groupInstanceId);
  }

  /** The request names an instance mapped to a different member id. */
  isStaticMemberFenced(groupInstanceId: string, memberId: string): boolean {
    const current = this.staticMembers.get(groupInstanceId);
    return current !== undefined && current !== memberId;
  }

  hasPendingMembers(): boolean {
    return this.pendingMembers.size > 0;
  }

  isPendingMember(memberId: string): boolean {
    return this.pendingMembers.has(memberId);
  }

  addPendingMember(memberId: string): void {
    this.pendingMembers.add(memberId);
  }

  get numAwaiting(): number {
    return this.numAwaitingJoin;
  }

  hasAllMembersJoined(): boolean {
    return this.members.size === this.numAwaitingJoin && this.pendingMembers.size === 0;
  }

  /** Max of the members' rebalance timeouts: how long a join phase may last. */
  rebalanceTimeoutMs(): number {
    let max = 0;
    for (const m of this.members.values()) max = Math.max(max, m.rebalanceTimeoutMs);
    return max;
  }

  /**
   * Keeps the leader if it rejoined, else hands leadership to any member that did. False when
   * nobody rejoined (or there is no leader at all).
   */
  maybeElectNewJoinedLeader(): boolean {
    if (this.leaderId === null) return false;
    if (this.get(this.leaderId).awaitingJoin) return true;
    for (const m of this.members.values()) {
      if (m.awaitingJoin) {
        this.leaderId = m.memberId;
        return true;
      }
    }
    return false;
  }

  // ------------------------------------------------------------------ protocols

  /** Counts each protocol name once per member, however often the member lists it. */
  private countProtocols(member: GroupMember, delta: number): void {
    for (const name of new Set(member.protocols.map((p) => p.name))) {
      this.protocolSupport.set(name, (this.protocolSupport.get(name) ?? 0) + delta);
    }
  }

  /** An Empty group takes any non-empty type and list; otherwise the type must match and one protocol be supported by all. */
  supportsProtocols(protocolType: string, protocols: Protocol[]): boolean {
    if (this.is(GroupState.Empty)) return protocolType !== '' && protocols.length > 0;
    return this.protocolType === protocolType &&
      protocols.some((p) => (this.protocolSupport.get(p.name) ?? 0) === this.members.size);
  }

  /** Each member votes for its preferred protocol among those all support; most votes wins. */
  selectProtocol(): string {
    if (this.members.size === 0) throw new Error('cannot select a protocol for an empty group');
    const candidates = new Set([...this.protocolSupport].filter(([, n]) => n === this.members.size).map(([name]) => name));
    const votes = new Map<string, number>();
    let best = '';
    let bestVotes = 0;
    for (const m of this.members.values()) {
      const choice = m.vote(candidates);
      const n = (votes.get(choice) ?? 0) + 1;
      votes.set(choice, n);
      if (n > bestVotes) [best, bestVotes] = [choice, n];
    }
    return best;
  }

  /** Next generation: CompletingRebalance with a chosen protocol, or Empty when nobody is left. */
  initNextGeneration(): void {
    this.generationId++;
    if (this.members.size > 0) {
      this.protocolName = this.selectProtocol();
      this.subscribed = this.computeSubscribedTopics();
      this.transitionTo(GroupState.CompletingRebalance);
    } else {
      this.protocolName = null;
      this.subscribed = this.computeSubscribedTopics();
      this.transitionTo(GroupState.Empty);
    }
    this.pendingSync.clear();
  }

  /** The members as the leader's JoinGroup answer lists them. */
  currentMembers(): JoinResult['members'] {
    return [...this.members.values()].map((m) => ({
      memberId: m.memberId, groupInstanceId: m.groupInstanceId, metadata: m.metadata(this.protocolName ?? ''),
    }));
  }

  // ------------------------------------------------------------------ subscriptions

  usesConsumerProtocol(): boolean {
    return this.protocolType === CONSUMER_PROTOCOL_TYPE;
  }

  computeSubscribedTopics(): Set<string> | null {
    if (this.protocolType !== CONSUMER_PROTOCOL_TYPE) return null;
    if (this.members.size === 0) return new Set();
    if (this.protocolName === null) return null;
    const all = new Set<string>();
    for (const m of this.members.values()) {
      const topics = subscribedTopics(m.metadata(this.protocolName));
      if (topics === null) return null;
      for (const t of topics) all.add(t);
    }
    return all;
  }

  refreshSubscribedTopics(): void {
    this.subscribed = this.computeSubscribedTopics();
  }

  /** Unknown subscriptions count as subscribed for consumer groups, as not for others (Kafka 4). */
  isSubscribedToTopic(topic: string): boolean {
    return this.subscribed ? this.subscribed.has(topic) : this.usesConsumerProtocol();
  }

  get subscribedTopics(): ReadonlySet<string> | null {
    return this.subscribed;
  }
}
