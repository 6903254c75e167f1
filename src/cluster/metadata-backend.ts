// Where the Controller reads and writes topics: the seam between its rules (controller.ts, one set
// for both modes) and the two places metadata lives. LocalMetadata is the single broker's: the
// MetadataStore in its data dir, the broker its own and only controller. The cluster's is
// EtcdMetadata (etcd/etcd-metadata.ts), over etcd and the broker's MetadataCache.
//
// Writes take the record the Controller validated against, read in the same synchronous stretch,
// and may answer STALE when, in a cluster, another broker changed that topic first: the Controller
// then runs its checks again on what is there now.
import type { MetadataStore, TopicRecord } from './metadata-store';
import type { PartitionState } from './partition-change';
import type { ReplicaAssignment } from './partition-reassignment';
import type { QuotaTable, QuotaValues } from './client-quotas';
import type { UserScramCredentials } from '../security/scram';
import { bindingKey, type AclBinding } from '../security/acl-binding';

export interface BrokerEndpoint {
  nodeId: number;
  host: string;
  port: number;
  rack: string | null;
}

/** An error code with Kafka's message, or success. */
export interface Outcome {
  errorCode: number;
  errorMessage: string | null;
}

/** What the controller tells the storage layer after a durable metadata change (single broker). */
export interface TopicStorage {
  /** Creates the logs of partitions `fromPartition`.. of a new or grown topic. */
  partitionsCreated(topic: TopicRecord, fromPartition: number): Promise<void>;
  topicDeleted(topic: TopicRecord): Promise<void>;
  configsChanged(topic: TopicRecord): void;
}

export const fail = (errorCode: number, errorMessage: string): Outcome => ({ errorCode, errorMessage });

/** The topic changed (or went) since the Controller read it: check again. */
export const STALE = 'stale';
export type Stale = typeof STALE;

export interface MetadataBackend {
  /**
   * The brokers that may hold replicas (live, in a cluster), by node id, with their endpoint of the
   * inter-broker listener. Given a listener name: only those that have that listener, with its endpoint.
   */
  brokers(listenerName?: string): BrokerEndpoint[];
  /** The controller's node id, -1 while there is none. */
  readonly controllerId: number;
  topic(name: string): TopicRecord | undefined;
  topicById(id: string): TopicRecord | undefined;
  /** Every topic, sorted by name. */
  topics(): TopicRecord[];
  /** Creates the topic; the created record once its partitions have leaders, or why not. */
  createTopic(name: string, replicas: number[][], configs: Record<string, string>): Promise<TopicRecord | Outcome | Stale>;
  deleteTopic(topic: TopicRecord): Promise<TopicRecord | Stale>;
  /** Appends partitions with these replica lists. */
  addPartitions(topic: TopicRecord, replicas: number[][]): Promise<TopicRecord | Outcome | Stale>;
  setTopicConfigs(topic: TopicRecord, configs: Record<string, string>): Promise<TopicRecord | Stale>;
  /** Replaces these partitions' replica sets and reassignments (AlterPartitionReassignments). */
  reassignPartitions(topic: TopicRecord, changes: ReadonlyMap<number, ReplicaAssignment>): Promise<TopicRecord | Stale>;
  /** A group's config overrides (GROUP config resources; empty: none). */
  groupConfigs(groupId: string): Readonly<Record<string, string>>;
  /** The groups that have config overrides, sorted. */
  groupsWithConfigs(): string[];
  /** Replaces a group's overrides, if they are still as read in the same synchronous stretch; none left removes them. */
  setGroupConfigs(groupId: string, configs: Record<string, string>): Promise<true | Stale>;
  /** Calls `listener` with a topic's name once it has been deleted. */
  onTopicDeleted(listener: (name: string) => void): void;
  /** A BROKER config resource's dynamic configs ("" the cluster-wide default, else a node id; empty: none). */
  brokerConfigs(resource: string): Readonly<Record<string, string>>;
  /** Replaces a BROKER resource's dynamic configs, if they are still as read in the same synchronous stretch. */
  setBrokerConfigs(resource: string, configs: Record<string, string>): Promise<true | Stale>;
  /** Calls `listener` after any dynamic broker configs may have changed (whichever broker wrote them). */
  onBrokerConfigsChanged(listener: () => void): void;
  /** Every client quota entity with its values (client-quotas.ts). */
  clientQuotas(): QuotaTable;
  /** Replaces these entities' values (empty: removed), if they are still as read in the same synchronous stretch. */
  setClientQuotas(changes: ReadonlyMap<string, QuotaValues>): Promise<true | Stale>;
  /** Calls `listener` after client quotas may have changed (whichever broker wrote them). */
  onClientQuotasChanged(listener: () => void): void;
  /** A user's SCRAM credentials by mechanism (empty: none). */
  scramCredentials(user: string): UserScramCredentials;
  /** The users that have SCRAM credentials, sorted. */
  scramUsers(): string[];
  /**
   * Replaces these users' credentials in one write (a user left without any is removed), if every one
   * of them is still as read in the same synchronous stretch.
   */
  setScramCredentials(changes: ReadonlyMap<string, UserScramCredentials>): Promise<true | Stale>;
  /** The cluster's ACLs: the same array until they change. */
  acls(): readonly AclBinding[];
  /** Adds and removes ACLs (adding one already there, or removing one not there, does nothing). */
  changeAcls(add: readonly AclBinding[], remove: readonly AclBinding[]): Promise<void>;
  /** Calls `listener` after the ACLs may have changed (whichever broker wrote them). */
  onAclsChanged(listener: () => void): void;
  /** A partition's leader, ISR and partition epoch, as elections compute from; undefined while it has none. */
  partitionState(topic: TopicRecord, partition: number): PartitionState | undefined;
  /**
   * Writes a partition's new leader and ISR (an election: ElectLeaders) if the partition is still at
   * the epoch before `next.partitionEpoch`; STALE when another change got in first.
   */
  writePartitionState(topic: TopicRecord, partition: number, next: PartitionState): Promise<true | Stale>;
}

/**
 * One broker's metadata: every write is applied to the MetadataStore, persisted, then handed to
 * the storage layer (logs created or deleted, configs applied) before the Controller answers.
 */
export class LocalMetadata implements MetadataBackend {
  private deleted: (name: string) => void = () => undefined;
  private brokerConfigsChanged: () => void = () => undefined;
  private clientQuotasChanged: () => void = () => undefined;
  private aclsChanged: () => void = () => undefined;

  constructor(
    private readonly store: MetadataStore,
    private readonly self: BrokerEndpoint,
    private readonly storage: TopicStorage,
    /** This broker's endpoint of each of its listeners; without it, `self` stands for every listener. */
    private readonly listeners?: ReadonlyMap<string, BrokerEndpoint>,
  ) {}

  brokers(listenerName?: string): BrokerEndpoint[] {
    if (listenerName === undefined || this.listeners === undefined) return [this.self];
    const endpoint = this.listeners.get(listenerName);
    return endpoint ? [endpoint] : [];
  }

  get controllerId(): number {
    return this.self.nodeId;
  }

  topic(name: string): TopicRecord | undefined {
    return this.store.topic(name);
  }

  topicById(id: string): TopicRecord | undefined {
    return this.store.topicById(id);
  }

  topics(): TopicRecord[] {
    return this.store.topics();
  }

  async createTopic(name: string, replicas: number[][], configs: Record<string, string>): Promise<TopicRecord> {
    const topic = this.store.createTopic(name, replicas, configs);
    await this.store.persist();
    await this.storage.partitionsCreated(topic, 0);
    return topic;
  }

  async deleteTopic(topic: TopicRecord): Promise<TopicRecord> {
    this.store.deleteTopic(topic.name);
    await this.store.persist();
    await this.storage.topicDeleted(topic);
    this.deleted(topic.name);
    return topic;
  }

  async addPartitions(topic: TopicRecord, replicas: number[][]): Promise<TopicRecord> {
    const grown = this.store.addPartitions(topic.name, replicas);
    await this.store.persist();
    await this.storage.partitionsCreated(grown, topic.partitions.length);
    return grown;
  }

  async setTopicConfigs(topic: TopicRecord, configs: Record<string, string>): Promise<TopicRecord> {
    const changed = this.store.setTopicConfigs(topic.name, configs);
    await this.store.persist();
    this.storage.configsChanged(changed);
    return changed;
  }

  /**
   * Never asked for a change: this broker is the only one, so every valid target of a reassignment
   * is [this broker], which every partition already has (the Controller writes nothing then).
   */
  reassignPartitions(topic: TopicRecord): Promise<TopicRecord> {
    return Promise.resolve(topic);
  }

  groupConfigs(groupId: string): Readonly<Record<string, string>> {
    return this.store.groupConfigs(groupId);
  }

  groupsWithConfigs(): string[] {
    return this.store.groupsWithConfigs();
  }

  async setGroupConfigs(groupId: string, configs: Record<string, string>): Promise<true> {
    this.store.setGroupConfigs(groupId, configs);
    await this.store.persist();
    return true;
  }

  onTopicDeleted(listener: (name: string) => void): void {
    this.deleted = listener;
  }

  brokerConfigs(resource: string): Readonly<Record<string, string>> {
    return this.store.brokerConfigs(resource);
  }

  async setBrokerConfigs(resource: string, configs: Record<string, string>): Promise<true> {
    this.store.setBrokerConfigs(resource, configs);
    await this.store.persist();
    this.brokerConfigsChanged();
    return true;
  }

  onBrokerConfigsChanged(listener: () => void): void {
    this.brokerConfigsChanged = listener;
  }

  clientQuotas(): QuotaTable {
    return this.store.clientQuotas;
  }

  async setClientQuotas(changes: ReadonlyMap<string, QuotaValues>): Promise<true> {
    this.store.setClientQuotas(changes);
    await this.store.persist();
    this.clientQuotasChanged();
    return true;
  }

  onClientQuotasChanged(listener: () => void): void {
    this.clientQuotasChanged = listener;
  }

  scramCredentials(user: string): UserScramCredentials {
    return this.store.scramCredentials(user);
  }

  scramUsers(): string[] {
    return this.store.scramUsers();
  }

  async setScramCredentials(changes: ReadonlyMap<string, UserScramCredentials>): Promise<true> {
    this.store.setScramCredentials(changes);
    await this.store.persist();
    return true;
  }

  acls(): readonly AclBinding[] {
    return this.store.acls();
  }

  async changeAcls(add: readonly AclBinding[], remove: readonly AclBinding[]): Promise<void> {
    const removed = new Set(remove.map(bindingKey));
    const next = new Map(this.store.acls().filter((a) => !removed.has(bindingKey(a))).map((a) => [bindingKey(a), a]));
    for (const a of add) if (!next.has(bindingKey(a))) next.set(bindingKey(a), a);
    this.store.setAcls([...next.values()]);
    await this.store.persist();
    this.aclsChanged();
  }

  onAclsChanged(listener: () => void): void {
    this.aclsChanged = listener;
  }

  /** The store keeps no partition epochs: a single broker's partitions never change leader or ISR. */
  partitionState(topic: TopicRecord, partition: number): PartitionState | undefined {
    const p = topic.partitions[partition];
    return p && { replicas: p.replicas, leader: p.leader, leaderEpoch: p.leaderEpoch, isr: [...p.isr], partitionEpoch: 0 };
  }

  /**
   * Never called: the broker is every partition's one replica and leads it, so no election changes
   * anything (ElectLeaders answers ELECTION_NOT_NEEDED). A call would be a bug in the rules.
   */
  writePartitionState(topic: TopicRecord, partition: number): Promise<true> {
    return Promise.reject(new Error(`${topic.name}-${partition}: a single broker's partition cannot change leader`));
  }
}
