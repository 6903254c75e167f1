// A coordinator on a fake clock with an in-memory store whose writes can be held back, so tests
// can put a request in the middle of another one's write; and a Stable group to start from.
import { expect } from 'chai';
import pino from 'pino';
import { ErrorCode } from '../../src/common/errors';
import { coordinatorPartitionFor } from '../../src/cluster/coordinator-partition';
import type { TopicRecord } from '../../src/cluster/metadata-store';
import type { ConsumerGroupRecord } from '../../src/group/consumer-records';
import {
  GroupCoordinator, type ConsumerGroupTopics, type GroupCoordinatorConfig, type JoinRequest, type ShareGroupDeletionHook, type ShareStateInitializer,
} from '../../src/group/coordinator';
import { GroupState, type JoinResult, type SyncResult } from '../../src/group/group';
import type {
  GroupSnapshot, LoadedGroup, OffsetsStore, TopicPartitionKey, TopicPartitionOffset, TxnProducer,
} from '../../src/group/store';
import { Writer } from '../../src/protocol/primitives';
import { retentionKey } from '../../src/group/timers';
import type { InternalTopicToCreate } from '../../src/group/streams-topology';
import { Timer } from '../../src/replica/delayed/timing-wheel';

export type Write =
  | { kind: 'offsets'; groupId: string; offsets: TopicPartitionOffset[] }
  | { kind: 'txnOffsets'; groupId: string; producer: TxnProducer; offsets: TopicPartitionOffset[] }
  | { kind: 'group'; groupId: string; group: GroupSnapshot }
  | { kind: 'consumerGroup'; groupId: string; records: ConsumerGroupRecord[] }
  | { kind: 'deleteGroup'; groupId: string; keys: TopicPartitionKey[]; consumerTombstones?: ConsumerGroupRecord[] }
  | { kind: 'deleteOffsets'; groupId: string; keys: TopicPartitionKey[] };

export class FakeStore implements OffsetsStore {
  readonly writes: Write[] = [];
  /** While true, writes wait for release(). */
  hold = false;
  /** The error code the next writes answer. */
  failWith = 0;
  private held: (() => void)[] = [];

  /** `loaded`: what the log holds, each group read back by the load of its partition. */
  constructor(readonly loaded: LoadedGroup[] = []) {}

  private write(w: Write): Promise<number> {
    this.writes.push(w);
    const code = this.failWith;
    if (!this.hold) return Promise.resolve(code);
    return new Promise((resolve) => this.held.push(() => resolve(code)));
  }

  /** Lets the held writes complete, in order. */
  release(): void {
    this.hold = false;
    for (const r of this.held.splice(0)) r();
  }

  storeOffsets(groupId: string, offsets: TopicPartitionOffset[]): Promise<number> {
    return this.write({ kind: 'offsets', groupId, offsets });
  }

  storeTxnOffsets(groupId: string, producer: TxnProducer, offsets: TopicPartitionOffset[]): Promise<number> {
    return this.write({ kind: 'txnOffsets', groupId, producer, offsets });
  }

  storeGroup(groupId: string, group: GroupSnapshot): Promise<number> {
    return this.write({ kind: 'group', groupId, group });
  }

  storeConsumerGroup(groupId: string, records: ConsumerGroupRecord[]): Promise<number> {
    return this.write({ kind: 'consumerGroup', groupId, records });
  }

  deleteGroup(groupId: string, keys: TopicPartitionKey[], consumerTombstones: ConsumerGroupRecord[] = []): Promise<number> {
    return this.write({ kind: 'deleteGroup', groupId, keys, ...(consumerTombstones.length > 0 ? { consumerTombstones } : {}) });
  }

  deleteOffsets(groupId: string, keys: TopicPartitionKey[]): Promise<number> {
    return this.write({ kind: 'deleteOffsets', groupId, keys });
  }

  /** Loads of each partition, in order. */
  readonly loads: number[] = [];
  /** While true, loads wait for releaseLoads() (and then read `loaded` as it is then). */
  holdLoads = false;
  private heldLoads: (() => void)[] = [];

  async loadPartition(index: number): Promise<LoadedGroup[]> {
    this.loads.push(index);
    if (this.holdLoads) await new Promise<void>((resolve) => this.heldLoads.push(resolve));
    return this.loaded.filter((g) => coordinatorPartitionFor(g.groupId, PARTITIONS) === index);
  }

  releaseLoads(): void {
    this.holdLoads = false;
    for (const r of this.heldLoads.splice(0)) r();
  }

  groupWrites(): GroupSnapshot[] {
    return this.writes.flatMap((w) => (w.kind === 'group' ? [w.group] : []));
  }
}

/** The partitions of __consumer_offsets in these tests. */
export const PARTITIONS = 50;

/** The timers of a coordinator with no group timer left: each hosted partition's retention check. */
export const retentionTimers = (partitions = PARTITIONS): string[] => Array.from({ length: partitions }, (_, p) => retentionKey(p));

export const DEFAULTS: GroupCoordinatorConfig = {
  minSessionTimeoutMs: 1000,
  maxSessionTimeoutMs: 300_000,
  maxSize: 1000,
  initialRebalanceDelayMs: 0,
  offsetMetadataMaxBytes: 4096,
  offsetsRetentionMs: 7 * 24 * 3600_000,
  offsetsRetentionCheckIntervalMs: 600_000,
  consumerSessionTimeoutMs: 45_000,
  consumerHeartbeatIntervalMs: 5000,
  consumerMaxSize: 1000,
  consumerAssignors: ['uniform', 'range'],
  consumerMigrationPolicy: 'bidirectional',
  // Assignments at once unless a test says otherwise (Kafka's default is 1000).
  consumerAssignmentIntervalMs: 0,
  streamsSessionTimeoutMs: 45_000,
  streamsHeartbeatIntervalMs: 5000,
  streamsNumStandbyReplicas: 0,
  streamsInitialRebalanceDelayMs: 0,
  shareSessionTimeoutMs: 45_000,
  shareHeartbeatIntervalMs: 5_000,
  shareMaxSize: 200,
  shareAssignmentIntervalMs: 0,
};

/** Lets resolved promises' callbacks run. */
export const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** A promise whose outcome can be looked at synchronously. */
export interface Tracked<T> {
  done: boolean;
  value: T | undefined;
}

export function track<T>(p: Promise<T>): Tracked<T> {
  const t: Tracked<T> = { done: false, value: undefined };
  void p.then((v) => {
    t.done = true;
    t.value = v;
  });
  return t;
}

/** The cluster's topics as consumer groups see them: created, grown and deleted by the tests. */
export class FakeTopics implements ConsumerGroupTopics {
  private readonly byName = new Map<string, TopicRecord>();
  private nextId = 1;

  /** Creates the topic (a new id) or sets its partition count; returns its id. */
  set(name: string, partitions: number): string {
    const id = this.byName.get(name)?.id ?? (this.nextId++).toString(16).padStart(32, '0');
    const records = Array.from({ length: partitions }, (_, index) => ({ index, replicas: [0], leader: 0, leaderEpoch: 0, isr: [0] }));
    this.byName.set(name, { name, id, partitions: records, configs: {} });
    return id;
  }

  delete(name: string): void {
    this.byName.delete(name);
  }

  id(name: string): string {
    return this.byName.get(name)!.id;
  }

  topic(name: string): TopicRecord | undefined {
    return this.byName.get(name);
  }

  topics(): TopicRecord[] {
    return [...this.byName.values()];
  }

  brokers(): { nodeId: number; rack: string | null }[] {
    return [{ nodeId: 0, rack: null }];
  }
}

export class Harness {
  now = 1_700_000_000_000;
  readonly timer = new Timer(() => this.now);
  readonly coordinator: GroupCoordinator;
  readonly topics = new FakeTopics();
  /** Each group's config overrides, as GROUP config resources would set them. */
  readonly groupConfigs = new Map<string, Record<string, string>>();
  /** The internal topics streams groups had created (each created at once in `topics`). */
  readonly internalTopicsCreated: InternalTopicToCreate[] = [];
  /** What share groups asked the share coordinator to initialize, in order. */
  readonly shareInitializations: { groupId: string; stateEpoch: number; topics: { topicId: string; partitions: number[] }[] }[] = [];
  /** How the share coordinator answers an initialization (a test may replace it: hold it back, refuse). */
  initializeShareState: ShareStateInitializer = () => Promise.resolve();
  /** The share groups DeleteGroups deleted, with their share-partitions. */
  readonly shareGroupsDeleted: { groupId: string; topics: { topicId: string; partitions: number[] }[] }[] = [];
  onShareGroupDeleted: ShareGroupDeletionHook = () => Promise.resolve(ErrorCode.NONE);

  constructor(readonly store = new FakeStore(), config: Partial<GroupCoordinatorConfig> = {}) {
    this.coordinator = new GroupCoordinator({ ...DEFAULTS, ...config }, this.timer, pino({ level: 'silent' }), () => this.now,
      {
        topics: this.topics, groupConfig: (groupId) => this.groupConfigs.get(groupId),
        createInternalTopics: (topics) => {
          for (const t of topics) {
            this.internalTopicsCreated.push(t);
            this.topics.set(t.name, t.numPartitions);
          }
          return Promise.resolve();
        },
        initializeShareState: (groupId, stateEpoch, topics) => {
          this.shareInitializations.push({ groupId, stateEpoch, topics: topics.map((t) => ({ topicId: t.topicId, partitions: [...t.partitions] })) });
          return this.initializeShareState(groupId, stateEpoch, topics);
        },
        onShareGroupDeleted: (groupId, topics) => {
          this.shareGroupsDeleted.push({ groupId, topics: topics.map((t) => ({ topicId: t.topicId, partitions: [...t.partitions] })) });
          return this.onShareGroupDeleted(groupId, topics);
        },
      });
  }

  static async start(config: Partial<GroupCoordinatorConfig> = {}, store = new FakeStore()): Promise<Harness> {
    const h = new Harness(store, config);
    await h.electAll();
    return h;
  }

  /** What a single broker does: the topic (PARTITIONS partitions) in use, every partition elected; resolves once loaded. */
  electAll(epoch = 0): Promise<void> {
    this.coordinator.useOffsetsTopic(this.store, PARTITIONS);
    for (let p = 0; p < PARTITIONS; p++) this.coordinator.onElection(p, epoch);
    return this.coordinator.loaded();
  }

  /** Moves the clock in steps of at most `stepMs`, running what falls due, and lets callbacks run. */
  async advance(ms: number, stepMs = 100): Promise<void> {
    for (let left = ms; left > 0; left -= stepMs) {
      this.now += Math.min(stepMs, left);
      this.timer.runExpired();
      await flush();
    }
  }

  join(groupId: string, opts: Partial<JoinRequest> = {}): Tracked<JoinResult> {
    return track(this.coordinator.joinGroup(joinRequest(groupId, opts)));
  }

  /** The KIP-394 dance: MEMBER_ID_REQUIRED, then the join with the id handed out (not yet answered). */
  async joinNew(groupId: string, opts: Partial<JoinRequest> = {}): Promise<{ memberId: string; join: Tracked<JoinResult> }> {
    const first = await this.coordinator.joinGroup(joinRequest(groupId, { ...opts, memberId: '' }));
    if (first.errorCode !== 79) throw new Error(`expected MEMBER_ID_REQUIRED, got ${first.errorCode}`);
    return { memberId: first.memberId, join: this.join(groupId, { ...opts, memberId: first.memberId }) };
  }

  sync(groupId: string, memberId: string, generationId: number, assignments: [string, Buffer][] = [],
    extra: { groupInstanceId?: string | null; protocolType?: string | null; protocolName?: string | null } = {}): Tracked<SyncResult> {
    return track(this.coordinator.syncGroup({
      groupId, memberId, generationId, groupInstanceId: extra.groupInstanceId ?? null,
      protocolType: extra.protocolType ?? null, protocolName: extra.protocolName ?? null,
      assignments: assignments.map(([m, a]) => ({ memberId: m, assignment: a })),
    }));
  }

  heartbeat(groupId: string, memberId: string, generationId: number, groupInstanceId: string | null = null): number {
    return this.coordinator.heartbeat(groupId, memberId, groupInstanceId, generationId);
  }
}

export function joinRequest(groupId: string, opts: Partial<JoinRequest> = {}): JoinRequest {
  return {
    groupId,
    memberId: '',
    groupInstanceId: null,
    clientId: 'client',
    clientHost: '/127.0.0.1',
    rebalanceTimeoutMs: 10_000,
    sessionTimeoutMs: 30_000,
    protocolType: 'consumer',
    protocols: [{ name: 'range', metadata: subscription(['t']) }],
    requireKnownMemberId: true,
    supportSkippingAssignment: false,
    ...opts,
  };
}

/** ConsumerProtocolSubscription v1 bytes: version, topics, null user data, no owned partitions. */
export function subscription(topics: string[], version = 1): Buffer {
  const w = new Writer();
  w.int16(version);
  w.int32(topics.length);
  for (const t of topics) w.string(t);
  w.nullableBytes(null);
  if (version >= 1) w.int32(0);
  return w.finishOne();
}

/** The group the coordinator tests use. */
export const G = 'g';
export const buf = (s: string): Buffer => Buffer.from(s);

/** A Stable group of the members named (the first leads), each with an assignment "a-<name>". */
export async function stableGroup(h: Harness, clients: string[], opts: { rebalanceTimeoutMs?: number; sessionTimeoutMs?: number } = {}) {
  const ids: string[] = [];
  const joins = [];
  for (const clientId of clients) {
    const { memberId, join } = await h.joinNew(G, { clientId, ...opts });
    ids.push(memberId);
    joins.push(join);
  }
  await h.advance(100); // initial delay 0: the first generation forms on the timer
  for (const j of joins) expect(j.value?.errorCode).to.equal(ErrorCode.NONE);
  const generation = joins[0].value!.generationId;
  const leader = joins[0].value!.leader;
  expect(leader).to.equal(ids[0]);
  const syncs = ids.map((id) => h.sync(G, id, generation, id === leader ? ids.map((m, i) => [m, buf(`a-${clients[i]}`)] as [string, Buffer]) : []));
  await flush();
  for (const s of syncs) expect(s.value?.errorCode).to.equal(ErrorCode.NONE);
  expect(h.coordinator.group(G)!.state).to.equal(GroupState.Stable);
  return { ids, generation };
}
