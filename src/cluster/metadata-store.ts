/**
 * Durable cluster metadata (topics, partitions, topic configs, group configs, dynamic broker configs,
 * client quotas, the finalized feature levels, the users' SCRAM credentials, the ACLs) in the data directory.
 *
 * Files:
 *  - meta.properties      Kafka's layout: version=1, cluster.id, node.id.
 *                         Written once; a different node.id refuses to start.
 *  - fjord-metadata.json  A whole snapshot of the metadata.
 *
 * Persistence: every write produces a complete snapshot, written to
 * `fjord-metadata.json.tmp`, fsync'ed, renamed over `fjord-metadata.json`,
 * then the directory is fsync'ed. rename() is atomic, so after a crash the
 * main file is either the old snapshot or the new one, never a mix; a
 * leftover (possibly truncated) .tmp file is simply deleted on open. The
 * snapshot also carries a SHA-256 of its state, so a file damaged some other
 * way is reported instead of being half-read. Metadata changes are rare and
 * small, so rewriting the whole snapshot is cheaper than managing a log.
 *
 * Concurrency: mutations validate and apply in memory synchronously (readers
 * see them at once), return the new record, and schedule a write; `await
 * store.persist()` settles when a snapshot containing every mutation made so
 * far is durable. One writer loop runs at a time; mutations made while a
 * write is in flight are coalesced into the next snapshot, so callers never
 * interleave on disk. If a write fails, the store stops accepting mutations
 * (memory may be ahead of disk): persist() rejects with that error and later
 * mutations throw KAFKA_STORAGE_ERROR.
 */
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import { formatProperties, parseProperties } from '../config/properties';
import { topicCollision, validateTopicName } from './topic-names';
import type { PartitionReassignment } from './etcd/layout';
import { writeFileAtomically, writeFileAtomicallySync } from '../common/durable-file';
import { ErrorCode, type ErrorName } from '../common/errors';
import { randomKafkaUuid } from '../common/kafka-uuid';
import type { QuotaTable, QuotaValues } from './client-quotas';
import { loadScramCredentials, storeScramCredentials, type StoredScramCredentials, type UserScramCredentials } from '../security/scram';
import { isAclBinding, type AclBinding } from '../security/acl-binding';

export const META_PROPERTIES_FILE = 'meta.properties';
export const SNAPSHOT_FILE = 'fjord-metadata.json';
const SNAPSHOT_FORMAT = 1;

export interface PartitionRecord {
  readonly index: number;
  /** The assigned replicas, preferred leader first. */
  readonly replicas: readonly number[];
  /** The broker leading it now; -1 while none can (a cluster's partition whose replicas are all down). */
  readonly leader: number;
  readonly leaderEpoch: number;
  /** The in-sync replicas. */
  readonly isr: readonly number[];
  /** A reassignment in progress (a cluster's; absent: none); `replicas` is then the full set. */
  readonly reassignment?: PartitionReassignment;
}

/**
 * A partition as this store keeps it: one broker's, so its first replica (the broker itself) leads
 * and every replica is in sync. Only replicas and leaderEpoch are stored.
 */
function storedPartition(index: number, replicas: readonly number[], leaderEpoch: number): PartitionRecord {
  return { index, replicas: [...replicas], leader: replicas[0], leaderEpoch, isr: [...replicas] };
}

export interface TopicRecord {
  readonly name: string;
  /** 32 lowercase hex chars (the 16 bytes of the topic UUID). Never all zero. */
  readonly id: string;
  readonly partitions: readonly PartitionRecord[];
  /** Topic config overrides, raw strings as the client sent them. */
  readonly configs: Readonly<Record<string, string>>;
}

/** Aliases. */
export type TopicMeta = TopicRecord;
export type PartitionMeta = PartitionRecord;

/** A refused mutation; errorCode/errorName are the Kafka error to answer with. */
export class MetadataError extends Error {
  constructor(
    readonly errorName: string,
    readonly errorCode: number,
    message: string,
  ) {
    super(message);
    this.name = 'MetadataError';
  }
}

/** The data directory cannot be used (node id mismatch, corrupt files, ...). */
export class MetadataStoreError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MetadataStoreError';
  }
}

function fail(name: ErrorName, message: string): never {
  throw new MetadataError(name, ErrorCode[name], message);
}

/** A Kafka-style cluster id: base64url (no padding) of a random UUID, 22 chars, never starting with '-'. */
export function generateClusterId(): string {
  return randomKafkaUuid();
}

/** A random v4 topic id as 32 lowercase hex chars. */
export function generateTopicId(): string {
  return crypto.randomUUID().replace(/-/g, '');
}

const TOPIC_ID_RE = /^[0-9a-f]{32}$/;
const ZERO_ID = '0'.repeat(32);

function deepFreezeTopic(t: TopicRecord): TopicRecord {
  for (const p of t.partitions) {
    Object.freeze(p.replicas);
    Object.freeze(p.isr);
    Object.freeze(p);
  }
  Object.freeze(t.partitions);
  Object.freeze(t.configs);
  return Object.freeze(t);
}

function checkAssignments(assignments: ReadonlyArray<ReadonlyArray<number>>, what: string): void {
  for (let i = 0; i < assignments.length; i++) {
    const r = assignments[i];
    if (!Array.isArray(r) || r.length === 0) {
      fail('INVALID_REPLICA_ASSIGNMENT', `${what} ${i} has no replicas`);
    }
    for (const b of r) {
      if (!Number.isInteger(b) || b < 0) fail('INVALID_REPLICA_ASSIGNMENT', `${what} ${i} has an invalid broker id ${b}`);
    }
    if (new Set(r).size !== r.length) {
      fail('INVALID_REPLICA_ASSIGNMENT', `Duplicate brokers not allowed in replica assignment: ${r.join(', ')} for partition id ${i}.`);
    }
  }
}

interface SnapshotState {
  clusterId: string;
  nodeId: number;
  version: number;
  topics: TopicRecord[];
  /** Group id -> its config overrides (GROUP config resources); absent from snapshots without any. */
  groupConfigs?: Record<string, Record<string, string>>;
  /** Absent in snapshots written before features were kept (and until they are first set). */
  finalizedFeatures?: FeatureLevels;
  /** BROKER config resource ("" the cluster-wide default, else a node id) -> its dynamic configs; absent without any. */
  brokerConfigs?: Record<string, Record<string, string>>;
  /** Client quota entity key (client-quotas.ts entityKey) -> its quota values; absent without any. */
  clientQuotas?: Record<string, Record<string, number>>;
  /** User -> its SCRAM credentials (AlterUserScramCredentials); absent without any. */
  scramCredentials?: Record<string, StoredScramCredentials>;
  /** The ACLs (CreateAcls); absent without any. */
  acls?: AclBinding[];
}

/** Finalized feature levels by feature name (src/cluster/features.ts). */
export type FeatureLevels = Readonly<Record<string, number>>;

interface Waiter {
  target: number;
  resolve: () => void;
  reject: (e: Error) => void;
}

export interface OpenOptions {
  /** Cluster id for a brand-new data directory (default: random). */
  clusterId?: string;
}

/** The same (frozen) object for every resource without configs: readers may compare by identity. */
const NO_CONFIGS: Readonly<Record<string, string>> = Object.freeze({});
const NO_CREDENTIALS: UserScramCredentials = Object.freeze({});

export class MetadataStore {
  readonly dataDir: string;
  readonly nodeId: number;
  readonly clusterId: string;

  private readonly byName = new Map<string, TopicRecord>();
  private readonly byId = new Map<string, TopicRecord>();
  private readonly groupConfigsById = new Map<string, Readonly<Record<string, string>>>();
  private readonly brokerConfigsByResource = new Map<string, Readonly<Record<string, string>>>();
  private readonly quotasByEntity = new Map<string, QuotaValues>();
  private readonly scramCredentialsByUser = new Map<string, UserScramCredentials>();
  private features: FeatureLevels | undefined;
  /** Replaced, never changed in place: readers may compare by identity. */
  private aclList: readonly AclBinding[] = Object.freeze([]);
  private _version = 0;
  private persistedVersion = 0;
  private loop: Promise<void> | null = null;
  private waiters: Waiter[] = [];
  private failure: Error | null = null;
  private closed = false;

  private constructor(dataDir: string, nodeId: number, clusterId: string) {
    this.dataDir = dataDir;
    this.nodeId = nodeId;
    this.clusterId = clusterId;
  }

  /**
   * Opens (creating if needed) the store in `dataDir` for node `nodeId`.
   * Rejects with MetadataStoreError when meta.properties names another
   * node id or the snapshot is unreadable.
   */
  static async open(dataDir: string, nodeId: number, opts: OpenOptions = {}): Promise<MetadataStore> {
    return MetadataStore.openSync(dataDir, nodeId, opts);
  }

  /** Synchronous open (a few small files). */
  static openSync(dataDir: string, nodeId: number, opts: OpenOptions = {}): MetadataStore {
    if (!Number.isInteger(nodeId) || nodeId < 0) throw new MetadataStoreError(`Invalid node id ${nodeId}`);
    const dir = path.resolve(dataDir);
    fs.mkdirSync(dir, { recursive: true });
    const metaFile = path.join(dir, META_PROPERTIES_FILE);
    const snapFile = path.join(dir, SNAPSHOT_FILE);
    for (const f of [metaFile, snapFile]) fs.rmSync(f + '.tmp', { force: true });

    const snapshot = fs.existsSync(snapFile) ? readSnapshot(snapFile) : null;

    let clusterId: string;
    if (fs.existsSync(metaFile)) {
      let props: Map<string, string>;
      try {
        props = parseProperties(fs.readFileSync(metaFile, 'utf8'));
      } catch (e) {
        throw new MetadataStoreError(`Cannot read ${metaFile}: ${(e as Error).message}`);
      }
      const version = props.get('version');
      if (version !== '1') {
        throw new MetadataStoreError(`${metaFile} has version ${version ?? '(none)'}; only version 1 (KRaft) is supported`);
      }
      const storedNode = props.get('node.id');
      const cid = props.get('cluster.id');
      if (!cid || storedNode === undefined || !/^\d+$/.test(storedNode.trim())) {
        throw new MetadataStoreError(`${metaFile} is missing cluster.id or node.id`);
      }
      if (Number(storedNode) !== nodeId) {
        throw new MetadataStoreError(
          `Stored node id ${storedNode.trim()} in ${metaFile} doesn't match the configured node.id ${nodeId}. ` +
            `If you moved your data, set node.id to ${storedNode.trim()}; to start a new node, use an empty data directory.`,
        );
      }
      clusterId = cid.trim();
    } else {
      if (snapshot && snapshot.nodeId !== nodeId) {
        throw new MetadataStoreError(
          `Stored node id ${snapshot.nodeId} in ${snapFile} doesn't match the configured node.id ${nodeId}.`,
        );
      }
      clusterId = snapshot?.clusterId ?? opts.clusterId ?? generateClusterId();
      writeFileAtomicallySync(
        metaFile,
        formatProperties(
          [
            ['cluster.id', clusterId],
            ['node.id', String(nodeId)],
            ['version', '1'],
          ],
          ['', new Date().toString()],
        ),
      );
    }

    const store = new MetadataStore(dir, nodeId, clusterId);
    if (snapshot) {
      if (snapshot.clusterId !== clusterId) {
        throw new MetadataStoreError(
          `${snapFile} belongs to cluster ${snapshot.clusterId} but ${metaFile} says ${clusterId}; refusing to mix data directories`,
        );
      }
      if (snapshot.nodeId !== nodeId) {
        throw new MetadataStoreError(`Stored node id ${snapshot.nodeId} in ${snapFile} doesn't match the configured node.id ${nodeId}.`);
      }
      for (const t of snapshot.topics) {
        const frozen = deepFreezeTopic({ ...t, partitions: t.partitions.map((p) => storedPartition(p.index, p.replicas, p.leaderEpoch)) });
        store.byName.set(t.name, frozen);
        store.byId.set(t.id, frozen);
      }
      for (const [groupId, configs] of Object.entries(snapshot.groupConfigs ?? {})) store.groupConfigsById.set(groupId, Object.freeze(configs));
      for (const [resource, configs] of Object.entries(snapshot.brokerConfigs ?? {})) store.brokerConfigsByResource.set(resource, Object.freeze(configs));
      for (const [entity, values] of Object.entries(snapshot.clientQuotas ?? {})) store.quotasByEntity.set(entity, Object.freeze(values));
      for (const [user, stored] of Object.entries(snapshot.scramCredentials ?? {})) {
        try {
          store.scramCredentialsByUser.set(user, loadScramCredentials(stored));
        } catch (e) {
          throw new MetadataStoreError(`Metadata snapshot ${snapFile} is unreadable (${(e as Error).message}); refusing to start`);
        }
      }
      store.features = snapshot.finalizedFeatures && Object.freeze({ ...snapshot.finalizedFeatures });
      if (snapshot.acls) store.aclList = Object.freeze(snapshot.acls.map((a) => Object.freeze(a)));
      store._version = snapshot.version;
      store.persistedVersion = snapshot.version;
    }
    return store;
  }

  /** Bumped by every mutation (a metadata epoch for caches). */
  get version(): number {
    return this._version;
  }

  /** Path of the snapshot file. */
  get snapshotPath(): string {
    return path.join(this.dataDir, SNAPSHOT_FILE);
  }

  // ------------------------------------------------------------------ reads

  /** The topic named `name`. */
  topic(name: string): TopicRecord | undefined {
    return this.byName.get(name);
  }

  /** The topic with this 32-hex id (case-insensitive). */
  topicById(id: string): TopicRecord | undefined {
    return this.byId.get(id.toLowerCase());
  }

  /** All topics, sorted by name. */
  topics(): TopicRecord[] {
    return [...this.byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  hasTopic(name: string): boolean {
    return this.byName.has(name);
  }

  topicNames(): string[] {
    return [...this.byName.keys()];
  }

  get topicCount(): number {
    return this.byName.size;
  }

  /** A group's config overrides (empty: none). */
  groupConfigs(groupId: string): Readonly<Record<string, string>> {
    return this.groupConfigsById.get(groupId) ?? {};
  }

  /** The groups that have config overrides, sorted. */
  groupsWithConfigs(): string[] {
    return [...this.groupConfigsById.keys()].sort();
  }

  /** A BROKER config resource's dynamic configs ("" the cluster-wide default, else a node id; empty: none). */
  brokerConfigs(resource: string): Readonly<Record<string, string>> {
    return this.brokerConfigsByResource.get(resource) ?? NO_CONFIGS;
  }

  /** A user's SCRAM credentials by mechanism (empty: none). */
  scramCredentials(user: string): UserScramCredentials {
    return this.scramCredentialsByUser.get(user) ?? NO_CREDENTIALS;
  }

  /** The users that have SCRAM credentials, sorted. */
  scramUsers(): string[] {
    return [...this.scramCredentialsByUser.keys()].sort();
  }

  /** Aliases of topic / topicById / topics. */
  getTopic(name: string): TopicRecord | undefined {
    return this.topic(name);
  }

  getTopicById(id: string): TopicRecord | undefined {
    return this.topicById(id);
  }

  listTopics(): TopicRecord[] {
    return this.topics();
  }

  /** The finalized feature levels as last set (the same object until the next set); undefined: never set. */
  get finalizedFeatures(): FeatureLevels | undefined {
    return this.features;
  }

  // ------------------------------------------------------------------ mutations
  // Each validates (throwing MetadataError), applies in memory, schedules a
  // write and returns the new (frozen) record. `await persist()` for durability.

  /**
   * Creates a topic. `assignment[i]` is the replica list of partition i.
   * Throws MetadataError: TOPIC_ALREADY_EXISTS, INVALID_TOPIC_EXCEPTION
   * (illegal name or '.'/'_' collision), INVALID_PARTITIONS (no partitions),
   * INVALID_REPLICA_ASSIGNMENT (empty/duplicate replicas).
   */
  createTopic(
    name: string,
    assignment: ReadonlyArray<ReadonlyArray<number>>,
    configs: Readonly<Record<string, string>> = {},
    opts: { topicId?: string } = {},
  ): TopicRecord {
    this.checkWritable();
    if (this.byName.has(name)) fail('TOPIC_ALREADY_EXISTS', `Topic '${name}' already exists.`);
    const invalid = validateTopicName(name);
    if (invalid !== null) fail('INVALID_TOPIC_EXCEPTION', invalid);
    const colliding = topicCollision(name, this.byName.keys());
    if (colliding !== null) fail('INVALID_TOPIC_EXCEPTION', `Topic '${name}' collides with existing topic: ${colliding}`);
    if (assignment.length === 0) fail('INVALID_PARTITIONS', 'Number of partitions was set to an invalid non-positive value.');
    checkAssignments(assignment, 'Partition');
    let id: string;
    if (opts.topicId !== undefined) {
      id = opts.topicId.toLowerCase();
      if (!TOPIC_ID_RE.test(id) || id === ZERO_ID) throw new Error(`Invalid topic id ${opts.topicId}`);
      if (this.byId.has(id)) throw new Error(`Topic id ${id} is already in use`);
    } else {
      do id = generateTopicId();
      while (this.byId.has(id));
    }
    const topic = deepFreezeTopic({
      name,
      id,
      partitions: assignment.map((r, index) => storedPartition(index, r, 0)),
      configs: { ...configs },
    });
    this.byName.set(name, topic);
    this.byId.set(id, topic);
    this.changed();
    return topic;
  }

  /** Deletes a topic (UNKNOWN_TOPIC_OR_PARTITION if absent); returns the deleted record. */
  deleteTopic(name: string): TopicRecord {
    this.checkWritable();
    const t = this.byName.get(name);
    if (!t) fail('UNKNOWN_TOPIC_OR_PARTITION', 'This server does not host this topic-partition.');
    this.byName.delete(name);
    this.byId.delete(t.id);
    this.changed();
    return t;
  }

  /** Appends partitions: newAssignments[i] is the replica list of partition (current count + i). */
  addPartitions(name: string, newAssignments: ReadonlyArray<ReadonlyArray<number>>): TopicRecord {
    this.checkWritable();
    const t = this.byName.get(name);
    if (!t) fail('UNKNOWN_TOPIC_OR_PARTITION', 'This server does not host this topic-partition.');
    if (newAssignments.length === 0) fail('INVALID_PARTITIONS', `Topic already has ${t.partitions.length} partitions.`);
    checkAssignments(newAssignments, 'New partition');
    const base = t.partitions.length;
    return this.replace(t, {
      ...t,
      partitions: [
        ...t.partitions,
        ...newAssignments.map((r, i) => storedPartition(base + i, r, 0)),
      ],
    });
  }

  /** Replaces the topic's config overrides with `configs` (validate them first). */
  setTopicConfigs(name: string, configs: Readonly<Record<string, string>>): TopicRecord {
    this.checkWritable();
    const t = this.byName.get(name);
    if (!t) fail('UNKNOWN_TOPIC_OR_PARTITION', 'This server does not host this topic-partition.');
    return this.replace(t, { ...t, configs: { ...configs } });
  }

  /** Replaces a group's config overrides (validate them first); none left forgets the group. */
  setGroupConfigs(groupId: string, configs: Readonly<Record<string, string>>): void {
    this.checkWritable();
    if (Object.keys(configs).length === 0) this.groupConfigsById.delete(groupId);
    else this.groupConfigsById.set(groupId, Object.freeze({ ...configs }));
    this.changed();
  }

  /** Replaces a BROKER config resource's dynamic configs (validate them first); none left forgets the resource. */
  setBrokerConfigs(resource: string, configs: Readonly<Record<string, string>>): void {
    this.checkWritable();
    if (Object.keys(configs).length === 0) this.brokerConfigsByResource.delete(resource);
    else this.brokerConfigsByResource.set(resource, Object.freeze({ ...configs }));
    this.changed();
  }

  /** Every client quota entity with its values (AlterClientQuotas, DescribeClientQuotas, enforcement). */
  get clientQuotas(): QuotaTable {
    return this.quotasByEntity;
  }

  /** Replaces the values of these client quota entities (validated first); an empty set removes the entity. */
  setClientQuotas(changes: ReadonlyMap<string, QuotaValues>): void {
    this.checkWritable();
    for (const [entity, values] of changes) {
      if (Object.keys(values).length === 0) this.quotasByEntity.delete(entity);
      else this.quotasByEntity.set(entity, Object.freeze({ ...values }));
    }
    this.changed();
  }

  /** Replaces these users' SCRAM credentials, all at once (validate them first); a user left without any is forgotten. */
  setScramCredentials(changes: ReadonlyMap<string, UserScramCredentials>): void {
    this.checkWritable();
    for (const [user, credentials] of changes) {
      if (Object.keys(credentials).length === 0) this.scramCredentialsByUser.delete(user);
      else this.scramCredentialsByUser.set(user, Object.freeze({ ...credentials }));
    }
    this.changed();
  }

  /** The ACLs, the same array until they change. */
  acls(): readonly AclBinding[] {
    return this.aclList;
  }

  /** Replaces the ACLs (validated and without duplicates: see LocalMetadata.changeAcls). */
  setAcls(acls: readonly AclBinding[]): void {
    this.checkWritable();
    this.aclList = Object.freeze(acls.map((a) => Object.freeze({ ...a })));
    this.changed();
  }

  /** Sets one partition's leader epoch. */
  setLeaderEpoch(name: string, partition: number, leaderEpoch: number): TopicRecord {
    this.checkWritable();
    const t = this.byName.get(name);
    if (!t || !t.partitions[partition]) fail('UNKNOWN_TOPIC_OR_PARTITION', 'This server does not host this topic-partition.');
    const partitions = t.partitions.map((p) => (p.index === partition ? storedPartition(p.index, p.replicas, leaderEpoch) : p));
    return this.replace(t, { ...t, partitions });
  }

  /** Replaces the finalized feature levels (validated by the caller: features.ts). */
  setFinalizedFeatures(levels: FeatureLevels): FeatureLevels {
    this.checkWritable();
    this.features = Object.freeze({ ...levels });
    this.changed();
    return this.features;
  }

  /**
   * Resolves once every mutation made so far is on disk (fsync'ed snapshot
   * renamed into place). Rejects if a write failed.
   */
  persist(): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.persistedVersion >= this._version) return Promise.resolve();
    return this.waitDurable(this._version);
  }

  /** Alias of persist(). */
  flush(): Promise<void> {
    return this.persist();
  }

  /** Persists and refuses further mutations. */
  async close(): Promise<void> {
    try {
      await this.persist();
    } finally {
      this.closed = true;
    }
  }

  // ------------------------------------------------------------------ internals

  private checkWritable(): void {
    if (this.failure) {
      throw new MetadataError('KAFKA_STORAGE_ERROR', ErrorCode.KAFKA_STORAGE_ERROR, `Metadata store failed: ${this.failure.message}`);
    }
    if (this.closed) throw new MetadataError('KAFKA_STORAGE_ERROR', ErrorCode.KAFKA_STORAGE_ERROR, 'Metadata store is closed');
  }

  private replace(old: TopicRecord, next: TopicRecord): TopicRecord {
    const frozen = deepFreezeTopic(next);
    this.byName.set(old.name, frozen);
    this.byId.set(old.id, frozen);
    this.changed();
    return frozen;
  }

  private changed(): void {
    this._version++;
    if (!this.loop) this.loop = this.writeLoop();
  }

  private waitDurable(target: number): Promise<void> {
    const p = new Promise<void>((resolve, reject) => this.waiters.push({ target, resolve, reject }));
    if (!this.loop) this.loop = this.writeLoop();
    return p;
  }

  private snapshotState(): SnapshotState {
    const groupConfigs = Object.fromEntries(this.groupsWithConfigs().map((id) => [id, { ...this.groupConfigs(id) }]));
    const brokerConfigs = Object.fromEntries([...this.brokerConfigsByResource].sort(([a], [b]) => (a < b ? -1 : 1)).map(([r, c]) => [r, { ...c }]));
    const clientQuotas = Object.fromEntries([...this.quotasByEntity].sort(([a], [b]) => (a < b ? -1 : 1)).map(([e, v]) => [e, { ...v }]));
    const scramCredentials = Object.fromEntries(this.scramUsers().map((user) => [user, storeScramCredentials(this.scramCredentials(user))]));
    return {
      clusterId: this.clusterId, nodeId: this.nodeId, version: this._version, topics: this.listTopics(), groupConfigs,
      finalizedFeatures: this.features, brokerConfigs, clientQuotas, scramCredentials, acls: [...this.aclList],
    };
  }

  private async writeLoop(): Promise<void> {
    try {
      await Promise.resolve(); // let synchronous back-to-back mutations share one snapshot
      while (this.persistedVersion < this._version) {
        const state = this.snapshotState();
        await writeFileAtomically(this.snapshotPath, serializeSnapshot(state));
        this.persistedVersion = state.version;
        const done = this.waiters.filter((w) => w.target <= state.version);
        this.waiters = this.waiters.filter((w) => w.target > state.version);
        for (const w of done) w.resolve();
      }
      const rest = this.waiters;
      this.waiters = [];
      for (const w of rest) w.resolve();
    } catch (e) {
      this.failure = e instanceof Error ? e : new Error(String(e));
      const all = this.waiters;
      this.waiters = [];
      for (const w of all) w.reject(this.failure);
    } finally {
      this.loop = null;
    }
  }
}

function stateBody(state: SnapshotState): string {
  return JSON.stringify({
    clusterId: state.clusterId,
    nodeId: state.nodeId,
    version: state.version,
    topics: state.topics.map((t) => ({
      name: t.name,
      id: t.id,
      partitions: t.partitions.map((p) => ({ index: p.index, replicas: p.replicas, leaderEpoch: p.leaderEpoch })),
      configs: t.configs,
    })),
    // Only when there are some, so that a snapshot written before group configs existed still checks out.
    ...(Object.keys(state.groupConfigs ?? {}).length > 0 ? { groupConfigs: state.groupConfigs } : {}),
    // Only when set, so that a snapshot written before features were kept keeps its checksum.
    ...(state.finalizedFeatures && { finalizedFeatures: state.finalizedFeatures }),
    // Only when there are some, for the same reason.
    ...(Object.keys(state.brokerConfigs ?? {}).length > 0 ? { brokerConfigs: state.brokerConfigs } : {}),
    ...(Object.keys(state.clientQuotas ?? {}).length > 0 ? { clientQuotas: state.clientQuotas } : {}),
    ...(Object.keys(state.scramCredentials ?? {}).length > 0 ? { scramCredentials: state.scramCredentials } : {}),
    ...((state.acls ?? []).length > 0 ? { acls: state.acls } : {}),
  });
}

function serializeSnapshot(state: SnapshotState): string {
  const body = stateBody(state);
  const sha256 = crypto.createHash('sha256').update(body).digest('hex');
  return `{"format":${SNAPSHOT_FORMAT},"sha256":"${sha256}","state":${body}}\n`;
}

function readSnapshot(file: string): SnapshotState {
  const bad = (why: string) =>
    new MetadataStoreError(`Metadata snapshot ${file} is unreadable (${why}); refusing to start rather than lose topics`);
  let doc: unknown;
  try {
    doc = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    throw bad((e as Error).message);
  }
  const d = doc as { format?: unknown; sha256?: unknown; state?: unknown };
  if (!d || typeof d !== 'object' || d.format !== SNAPSHOT_FORMAT || typeof d.sha256 !== 'string' || !d.state) {
    throw bad(`unknown format ${JSON.stringify(d?.format)}`);
  }
  const s = d.state as SnapshotState;
  if (typeof s.clusterId !== 'string' || !Number.isInteger(s.nodeId) || !Number.isInteger(s.version) || !Array.isArray(s.topics)) {
    throw bad('missing fields');
  }
  if (s.groupConfigs !== undefined && (typeof s.groupConfigs !== 'object' || s.groupConfigs === null)) throw bad('bad group configs');
  if (s.brokerConfigs !== undefined && (typeof s.brokerConfigs !== 'object' || s.brokerConfigs === null)) throw bad('bad broker configs');
  if (s.clientQuotas !== undefined && (typeof s.clientQuotas !== 'object' || s.clientQuotas === null)) throw bad('bad client quotas');
  if (s.scramCredentials !== undefined && (typeof s.scramCredentials !== 'object' || s.scramCredentials === null)) throw bad('bad SCRAM credentials');
  if (s.acls !== undefined && (!Array.isArray(s.acls) || !s.acls.every(isAclBinding))) throw bad('bad ACLs');
  if (s.finalizedFeatures !== undefined && (typeof s.finalizedFeatures !== 'object' || s.finalizedFeatures === null ||
    !Object.values(s.finalizedFeatures).every(Number.isInteger))) {
    throw bad('bad finalized features');
  }
  const sum = crypto.createHash('sha256').update(stateBody(s)).digest('hex');
  if (sum !== d.sha256) throw bad('checksum mismatch');
  for (const t of s.topics) {
    if (typeof t.name !== 'string' || !TOPIC_ID_RE.test(t.id) || !Array.isArray(t.partitions) || typeof t.configs !== 'object') {
      throw bad(`bad topic entry ${JSON.stringify(t?.name)}`);
    }
  }
  return s;
}
