/**
 * A broker's local copy of the cluster metadata in etcd (Kafka's MetadataCache / MetadataImage):
 * brokers, the controller, topics, partition states, group and dynamic broker configs, the finalized feature levels and the ACLs, read
 * synchronously by whoever needs them.
 *
 * It lists every key under the prefix once, then follows one watch from the revision after that
 * listing, so no change is missed or applied twice; if etcd cancels the watch (its revision was
 * compacted away), it lists again. The maps change only in apply(), and each watch response is
 * applied as a whole before 'change' is emitted, so a reader never sees half of a transaction.
 */
import { EventEmitter } from 'events';
import type { IKeyValue, Namespace, Watcher } from 'etcd3';
import type { Logger } from '../../common/logger';
import type { QuotaTable, QuotaValues } from '../client-quotas';
import { isAclBinding, type AclBinding } from '../../security/acl-binding';
import {
  decodePartitionState,
  parseMetadataKey,
  type BrokerRegistration,
  type ControllerRecord,
  type PartitionState,
  type TopicAssignment,
} from './layout';
import { loadScramCredentials, type UserScramCredentials } from '../../security/scram';

/** The same (frozen) object for every resource without configs: readers may compare by identity. */
const NO_CONFIGS: Readonly<Record<string, string>> = Object.freeze({});
const NO_CREDENTIALS: UserScramCredentials = Object.freeze({});

export class MetadataCache extends EventEmitter {
  private readonly brokersById = new Map<number, BrokerRegistration>();
  private controllerRecord: ControllerRecord | null = null;
  private lastControllerEpoch = 0;
  private readonly topicsByName = new Map<string, TopicAssignment>();
  /** The etcd mod revision of each topic key: what a conditional topic write compares. */
  private readonly topicModRevisions = new Map<string, number>();
  /** The finalized feature levels (undefined until the first broker set them), and their key's mod revision. */
  private featureLevels: Readonly<Record<string, number>> | undefined;
  private featuresModRevision = 0;
  /** topic id -> partition -> state. */
  private readonly states = new Map<string, Map<number, PartitionState>>();
  /** group id -> its config overrides, and the mod revision of its key (what a conditional write compares). */
  private readonly groupConfigsById = new Map<string, { configs: Readonly<Record<string, string>>; modRevision: number }>();
  /** BROKER config resource ("" the default, else a node id) -> its dynamic configs and its key's mod revision. */
  private readonly brokerConfigsByResource = new Map<string, { configs: Readonly<Record<string, string>>; modRevision: number }>();
  /** Client quota entity -> its values and its key's mod revision; replaced (not changed) on every change. */
  private quotas: ReadonlyMap<string, { values: QuotaValues; modRevision: number }> = new Map();
  /** The quota values alone, made again after a change (readers compare it by identity). */
  private quotaTable: QuotaTable | null = null;
  /** user -> its SCRAM credentials and its key's mod revision. */
  private readonly scramCredentialsByUser = new Map<string, { credentials: UserScramCredentials; modRevision: number }>();
  /** The ACLs by their key, and the list acls() answers (rebuilt after they change; null: to rebuild). */
  private readonly aclsByKey = new Map<string, AclBinding>();
  private aclList: readonly AclBinding[] | null = null;
  /** The etcd revision everything above reflects. */
  private appliedRevision = 0;
  private watcher: Watcher | null = null;
  private closed = false;
  /** Callers of waitForRevision() not yet satisfied (a list, not listeners: there may be many). */
  private waiters: { revision: number; resolve: () => void; reject: (e: Error) => void }[] = [];

  private constructor(private readonly kv: Namespace, private readonly logger?: Logger) {
    super();
  }

  /** Lists the prefix and starts following it; resolves once the cache holds the current state. */
  static async start(kv: Namespace, logger?: Logger): Promise<MetadataCache> {
    const cache = new MetadataCache(kv, logger);
    await cache.load();
    return cache;
  }

  get revision(): number {
    return this.appliedRevision;
  }

  brokers(): BrokerRegistration[] {
    return [...this.brokersById.values()].sort((a, b) => a.brokerId - b.brokerId);
  }

  broker(id: number): BrokerRegistration | undefined {
    return this.brokersById.get(id);
  }

  /** The live controller, or null while there is none (between a controller's death and the next election). */
  controller(): ControllerRecord | null {
    return this.controllerRecord;
  }

  /** The last epoch any controller won with (0: never one). */
  controllerEpoch(): number {
    return this.lastControllerEpoch;
  }

  topics(): TopicAssignment[] {
    return [...this.topicsByName.values()];
  }

  topic(name: string): TopicAssignment | undefined {
    return this.topicsByName.get(name);
  }

  /** The mod revision of the topic's key (undefined: no such topic); a write conditioned on it fails if the topic changed since. */
  topicModRevision(name: string): number | undefined {
    return this.topicModRevisions.get(name);
  }

  /** The finalized feature levels as last written (a new object on each change); undefined: not set yet. */
  finalizedFeatures(): Readonly<Record<string, number>> | undefined {
    return this.featureLevels;
  }

  /** The mod revision of the features key (0: absent): what a conditional features write compares. */
  finalizedFeaturesModRevision(): number {
    return this.featuresModRevision;
  }

  /** The state of a partition of the topic now named `topic`. */
  partitionState(topic: string, partition: number): PartitionState | undefined {
    const id = this.topicsByName.get(topic)?.id;
    return id === undefined ? undefined : this.states.get(id)?.get(partition);
  }

  /** A group's config overrides (empty: none). */
  groupConfigs(groupId: string): Readonly<Record<string, string>> {
    return this.groupConfigsById.get(groupId)?.configs ?? {};
  }

  /** The mod revision of the group's configs key (0: none), for a write conditioned on them being unchanged. */
  groupConfigsModRevision(groupId: string): number {
    return this.groupConfigsById.get(groupId)?.modRevision ?? 0;
  }

  /** The groups that have config overrides, sorted. */
  groupsWithConfigs(): string[] {
    return [...this.groupConfigsById.keys()].sort();
  }

  /** A BROKER config resource's dynamic configs ("" the cluster-wide default, else a node id; empty: none). */
  brokerConfigs(resource: string): Readonly<Record<string, string>> {
    return this.brokerConfigsByResource.get(resource)?.configs ?? NO_CONFIGS;
  }

  /** The mod revision of the resource's configs key (0: none), for a write conditioned on them being unchanged. */
  brokerConfigsModRevision(resource: string): number {
    return this.brokerConfigsByResource.get(resource)?.modRevision ?? 0;
  }

  /** Every client quota entity with its values; the same object until one changes. */
  clientQuotas(): QuotaTable {
    this.quotaTable ??= new Map([...this.quotas].map(([entity, q]) => [entity, q.values]));
    return this.quotaTable;
  }

  /** The mod revision of an entity's quota key (0: none), for a write conditioned on it being unchanged. */
  clientQuotaModRevision(entity: string): number {
    return this.quotas.get(entity)?.modRevision ?? 0;
  }

  /** A user's SCRAM credentials by mechanism (empty: none). */
  scramCredentials(user: string): UserScramCredentials {
    return this.scramCredentialsByUser.get(user)?.credentials ?? NO_CREDENTIALS;
  }

  /** The mod revision of the user's credentials key (0: none), for a write conditioned on them being unchanged. */
  scramCredentialsModRevision(user: string): number {
    return this.scramCredentialsByUser.get(user)?.modRevision ?? 0;
  }

  /** The users that have SCRAM credentials, sorted. */
  scramUsers(): string[] {
    return [...this.scramCredentialsByUser.keys()].sort();
  }

  /** The cluster's ACLs: the same array until one is created or deleted. */
  acls(): readonly AclBinding[] {
    this.aclList ??= Object.freeze([...this.aclsByKey.values()]);
    return this.aclList;
  }

  /** Resolves once at least `count` brokers are registered. */
  brokersAtLeast(count: number): Promise<void> {
    return new Promise((resolve) => {
      const check = () => {
        if (this.brokersById.size < count && !this.closed) return;
        this.off('change', check);
        resolve();
      };
      this.on('change', check);
      check();
    });
  }

  /** Resolves once the cache reflects etcd revision `revision` (e.g. that of one's own write). */
  waitForRevision(revision: number): Promise<void> {
    if (this.appliedRevision >= revision) return Promise.resolve();
    if (this.closed) return Promise.reject(new Error('metadata cache closed'));
    return new Promise((resolve, reject) => this.waiters.push({ revision, resolve, reject }));
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const w of this.waiters) w.reject(new Error('metadata cache closed'));
    this.waiters = [];
    await this.watcher?.cancel();
    this.watcher = null;
    this.emit('change'); // waiters such as brokersAtLeast() give up
  }

  private async load(): Promise<void> {
    const listing = await this.kv.getAll().prefix('/').exec();
    if (this.closed) return;
    this.brokersById.clear();
    this.controllerRecord = null;
    this.lastControllerEpoch = 0;
    this.featureLevels = undefined;
    this.featuresModRevision = 0;
    this.topicsByName.clear();
    this.topicModRevisions.clear();
    this.states.clear();
    this.groupConfigsById.clear();
    this.brokerConfigsByResource.clear();
    this.quotas = new Map();
    this.quotaTable = null;
    this.scramCredentialsByUser.clear();
    this.aclsByKey.clear();
    this.aclList = null;
    for (const kv of listing.kvs) this.apply('put', kv);
    this.appliedRevision = Number(listing.header.revision);
    this.changed();

    const watcher = await this.kv.watch().prefix('/').startRevision(String(this.appliedRevision + 1)).create();
    if (this.closed) {
      await watcher.cancel();
      return;
    }
    this.watcher = watcher;
    watcher.on('data', (res) => {
      for (const event of res.events) this.apply(event.type === 'Delete' ? 'delete' : 'put', event.kv);
      this.appliedRevision = Math.max(this.appliedRevision, Number(res.header.revision));
      this.changed();
    });
    watcher.on('error', (err) => {
      if (this.closed) return;
      this.logger?.warn({ err }, 'etcd watch cancelled; listing the cluster metadata again');
      this.watcher = null;
      watcher.cancel().catch(() => undefined);
      this.load().catch((e) => this.logger?.error({ err: e }, 'cannot reload the cluster metadata from etcd'));
    });
  }

  /** After a listing or a watch response is applied: wakes whoever waited for it, then tells everyone. */
  private changed(): void {
    const done = this.waiters.filter((w) => w.revision <= this.appliedRevision);
    this.waiters = this.waiters.filter((w) => w.revision > this.appliedRevision);
    for (const w of done) w.resolve();
    this.emit('change');
  }

  private apply(type: 'put' | 'delete', kv: IKeyValue): void {
    const key = kv.key.toString();
    const what = parseMetadataKey(key);
    if (!what) return; // not ours: another tool's key under the prefix
    const value = type === 'put' ? kv.value.toString() : null;
    try {
      switch (what.kind) {
        case 'broker':
          if (value === null) this.brokersById.delete(what.brokerId);
          else this.brokersById.set(what.brokerId, JSON.parse(value) as BrokerRegistration);
          break;
        case 'controller':
          this.controllerRecord = value === null ? null : (JSON.parse(value) as ControllerRecord);
          break;
        case 'controllerEpoch':
          this.lastControllerEpoch = value === null ? 0 : Number(value);
          break;
        case 'features':
          this.featureLevels = value === null ? undefined : Object.freeze(JSON.parse(value) as Record<string, number>);
          this.featuresModRevision = value === null ? 0 : Number(kv.mod_revision);
          break;
        case 'topic':
          if (value === null) {
            this.topicsByName.delete(what.name);
            this.topicModRevisions.delete(what.name);
          } else {
            this.topicsByName.set(what.name, JSON.parse(value) as TopicAssignment);
            this.topicModRevisions.set(what.name, Number(kv.mod_revision));
          }
          break;
        case 'partitionState': {
          let partitions = this.states.get(what.topicId);
          if (value !== null) {
            if (!partitions) this.states.set(what.topicId, (partitions = new Map()));
            partitions.set(what.partition, decodePartitionState(value, Number(kv.version)));
          } else if (partitions) {
            partitions.delete(what.partition);
            if (partitions.size === 0) this.states.delete(what.topicId);
          }
          break;
        }
        case 'groupConfigs':
          if (value === null) this.groupConfigsById.delete(what.groupId);
          else this.groupConfigsById.set(what.groupId, { configs: JSON.parse(value) as Record<string, string>, modRevision: Number(kv.mod_revision) });
          break;
        case 'brokerConfigs':
          if (value === null) this.brokerConfigsByResource.delete(what.resource);
          else this.brokerConfigsByResource.set(what.resource, { configs: Object.freeze(JSON.parse(value) as Record<string, string>), modRevision: Number(kv.mod_revision) });
          break;
        case 'clientQuota': {
          const quotas = new Map(this.quotas);
          if (value === null) quotas.delete(what.entity);
          else quotas.set(what.entity, { values: Object.freeze(JSON.parse(value) as Record<string, number>), modRevision: Number(kv.mod_revision) });
          this.quotas = quotas;
          this.quotaTable = null;
          break;
        }
        case 'scramCredentials':
          if (value === null) this.scramCredentialsByUser.delete(what.user);
          else this.scramCredentialsByUser.set(what.user, { credentials: loadScramCredentials(JSON.parse(value)), modRevision: Number(kv.mod_revision) });
          break;
        case 'acl': {
          const binding: unknown = value === null ? null : JSON.parse(value);
          if (binding !== null && !isAclBinding(binding)) throw new Error('not an ACL binding');
          if (binding === null) this.aclsByKey.delete(what.key);
          else this.aclsByKey.set(what.key, Object.freeze(binding));
          this.aclList = null;
          break;
        }
      }
    } catch (err) {
      this.logger?.warn({ err, key }, 'ignoring a malformed cluster metadata value in etcd');
    }
  }
}
