/**
 * The Controller's backend in cluster mode (controller.ts keeps the rules; this reads and writes
 * the topics in etcd). Reads come from the broker's MetadataCache, as TopicRecords rebuilt once per
 * cache change; brokers() are the live registrations.
 *
 * Topic writes (create, delete, grow, reconfigure) come from whichever broker got the request, as
 * in Kafka's ZooKeeper mode, where AdminZkClient on any broker wrote /brokers/topics and the
 * controller reacted to the change: each is one etcd transaction conditioned on the topic key
 * being as this broker read it (absent, for a creation), so of two brokers racing one wins and the
 * other's Controller checks again (TOPIC_ALREADY_EXISTS, ...). Partition states are written only
 * by the active controller (cluster-controller.ts, fenced by its epoch) and by a partition's leader
 * (EtcdCluster.alterPartitionState): a creation or a growth waits until the controller has given
 * every new partition its state, so that Metadata right after CreateTopics shows leaders.
 *
 * Logs are not created or deleted here (the single broker's TopicStorage callbacks): every
 * broker's reconciler does it from its own cache, whichever broker wrote the change.
 */
import { ErrorCode } from '../../common/errors';
import type { Logger } from '../../common/logger';
import { STALE, fail, type BrokerEndpoint, type MetadataBackend, type Outcome, type Stale } from '../metadata-backend';
import { generateTopicId, type PartitionRecord, type TopicRecord } from '../metadata-store';
import { isUncleanElection, type PartitionState } from '../partition-change';
import type { EtcdCluster } from './etcd-cluster';
import type { ReplicaAssignment } from '../partition-reassignment';
import type { TopicAssignment } from './layout';
import type { QuotaTable, QuotaValues } from '../client-quotas';
import type { UserScramCredentials } from '../../security/scram';
import type { AclBinding } from '../../security/acl-binding';

export interface EtcdMetadataOptions {
  /** The listener whose endpoint brokers() reports by default (the inter-broker one); else each broker's first. */
  listenerName?: string;
  /** How long a creation or growth waits for the controller's partition states (default 10 s). */
  partitionStateTimeoutMs?: number;
  /** Where the elections this broker writes (ElectLeaders) are logged. */
  logger?: Logger;
}

const DEFAULT_PARTITION_STATE_TIMEOUT_MS = 10_000;

interface TopicView {
  byName: Map<string, TopicRecord>;
  byId: Map<string, TopicRecord>;
  sorted: TopicRecord[];
}

export class EtcdMetadata implements MetadataBackend {
  /** The topics as TopicRecords, built on first read after a cache change. */
  private view: TopicView | null = null;
  /** The id each topic name had at the last cache change: a name whose id went was deleted. */
  private knownIds: Map<string, string>;
  private deleted: (name: string) => void = () => undefined;

  constructor(private readonly cluster: EtcdCluster, private readonly options: EtcdMetadataOptions = {}) {
    this.knownIds = this.topicIds();
    cluster.cache.on('change', () => this.onCacheChange());
  }

  brokers(listenerName?: string): BrokerEndpoint[] {
    const brokers: BrokerEndpoint[] = [];
    for (const b of this.cluster.cache.brokers()) {
      const endpoint = listenerName === undefined
        ? b.endpoints.find((e) => e.name === this.options.listenerName) ?? b.endpoints[0]
        : b.endpoints.find((e) => e.name === listenerName);
      if (endpoint) brokers.push({ nodeId: b.brokerId, host: endpoint.host, port: endpoint.port, rack: b.rack });
    }
    return brokers;
  }

  get controllerId(): number {
    return this.cluster.controllerId;
  }

  topic(name: string): TopicRecord | undefined {
    return this.topicView().byName.get(name);
  }

  topicById(id: string): TopicRecord | undefined {
    return this.topicView().byId.get(id.toLowerCase());
  }

  topics(): TopicRecord[] {
    return this.topicView().sorted;
  }

  async createTopic(name: string, replicas: number[][], configs: Record<string, string>): Promise<TopicRecord | Outcome | Stale> {
    let id: string;
    do id = generateTopicId();
    while (this.topicById(id));
    if (!(await this.cluster.putTopic({ name, id, replicas, configs: { ...configs } }, 0))) {
      return this.cluster.cache.topic(name) ? fail(ErrorCode.TOPIC_ALREADY_EXISTS, `Topic '${name}' already exists.`) : STALE;
    }
    return this.awaitPartitionStates(id, 0);
  }

  async deleteTopic(topic: TopicRecord): Promise<TopicRecord | Stale> {
    const modRevision = this.modRevisionOf(topic);
    if (modRevision === undefined) return STALE;
    return (await this.cluster.deleteTopic(topic.name, topic.id, modRevision)) ? topic : STALE;
  }

  async addPartitions(topic: TopicRecord, replicas: number[][]): Promise<TopicRecord | Outcome | Stale> {
    const written = await this.rewrite(topic, (a) => ({ ...a, replicas: [...a.replicas, ...replicas] }));
    return written ? this.awaitPartitionStates(topic.id, topic.partitions.length) : STALE;
  }

  async setTopicConfigs(topic: TopicRecord, configs: Record<string, string>): Promise<TopicRecord | Stale> {
    const written = await this.rewrite(topic, (a) => ({ ...a, configs: { ...configs } }));
    // Deleted right after the write: the Controller looks again and finds it gone.
    return written ? this.topicById(topic.id) ?? STALE : STALE;
  }

  async reassignPartitions(topic: TopicRecord, changes: ReadonlyMap<number, ReplicaAssignment>): Promise<TopicRecord | Stale> {
    const written = await this.rewrite(topic, (a) => {
      const replicas = a.replicas.map((r, partition) => [...(changes.get(partition)?.replicas ?? r)]);
      const reassignments = { ...a.reassignments };
      for (const [partition, change] of changes) {
        if (change.reassignment) reassignments[partition] = { adding: [...change.reassignment.adding], removing: [...change.reassignment.removing] };
        else delete reassignments[partition];
      }
      const { reassignments: _, ...rest } = a;
      return Object.keys(reassignments).length > 0 ? { ...rest, replicas, reassignments } : { ...rest, replicas };
    });
    return written ? this.topicById(topic.id) ?? STALE : STALE;
  }

  groupConfigs(groupId: string): Readonly<Record<string, string>> {
    return this.cluster.cache.groupConfigs(groupId);
  }

  groupsWithConfigs(): string[] {
    return this.cluster.cache.groupsWithConfigs();
  }

  async setGroupConfigs(groupId: string, configs: Record<string, string>): Promise<true | Stale> {
    const modRevision = this.cluster.cache.groupConfigsModRevision(groupId);
    return (await this.cluster.putGroupConfigs(groupId, configs, modRevision)) ? true : STALE;
  }

  onTopicDeleted(listener: (name: string) => void): void {
    this.deleted = listener;
  }

  brokerConfigs(resource: string): Readonly<Record<string, string>> {
    return this.cluster.cache.brokerConfigs(resource);
  }

  async setBrokerConfigs(resource: string, configs: Record<string, string>): Promise<true | Stale> {
    const modRevision = this.cluster.cache.brokerConfigsModRevision(resource);
    return (await this.cluster.putBrokerConfigs(resource, configs, modRevision)) ? true : STALE;
  }

  acls(): readonly AclBinding[] {
    return this.cluster.cache.acls();
  }

  /** From any broker, as any broker answers CreateAcls and DeleteAcls; every broker's cache follows. */
  changeAcls(add: readonly AclBinding[], remove: readonly AclBinding[]): Promise<void> {
    return this.cluster.changeAcls(add, remove);
  }

  /** Every cache change may be one: the listener compares (acls() keeps its array until the ACLs change). */
  onAclsChanged(listener: () => void): void {
    this.cluster.cache.on('change', listener);
  }

  /** Every cache change may be one: the listener compares (BrokerConfig.setDynamicConfigs emits only real changes). */
  onBrokerConfigsChanged(listener: () => void): void {
    this.cluster.cache.on('change', listener);
  }

  clientQuotas(): QuotaTable {
    return this.cluster.cache.clientQuotas();
  }

  async setClientQuotas(changes: ReadonlyMap<string, QuotaValues>): Promise<true | Stale> {
    const cache = this.cluster.cache;
    const writes = new Map([...changes].map(([entity, values]) => [entity, { values, expectedModRevision: cache.clientQuotaModRevision(entity) }]));
    return (await this.cluster.putClientQuotas(writes)) ? true : STALE;
  }

  /** Called when the cache's quota table is a new one (whichever broker wrote it). */
  onClientQuotasChanged(listener: () => void): void {
    let seen = this.cluster.cache.clientQuotas();
    this.cluster.cache.on('change', () => {
      const now = this.cluster.cache.clientQuotas();
      if (now === seen) return;
      seen = now;
      listener();
    });
  }

  scramCredentials(user: string): UserScramCredentials {
    return this.cluster.cache.scramCredentials(user);
  }

  scramUsers(): string[] {
    return this.cluster.cache.scramUsers();
  }

  async setScramCredentials(changes: ReadonlyMap<string, UserScramCredentials>): Promise<true | Stale> {
    const writes = [...changes].map(([user, credentials]) => ({ user, credentials, expectedModRevision: this.cluster.cache.scramCredentialsModRevision(user) }));
    return (await this.cluster.putScramCredentials(writes)) ? true : STALE;
  }

  partitionState(topic: TopicRecord, partition: number): PartitionState | undefined {
    const replicas = topic.partitions[partition]?.replicas;
    const state = this.modRevisionOf(topic) === undefined ? undefined : this.cluster.cache.partitionState(topic.name, partition);
    return replicas && state && { ...state, replicas };
  }

  /**
   * An election from whichever broker got the ElectLeaders request, conditioned on the partition's
   * epoch as AlterPartition is (not fenced as the controller's writes: a concurrent change makes it
   * stale, and a deleted topic's state is gone). The new leader takes it up from every broker's cache.
   */
  async writePartitionState(topic: TopicRecord, partition: number, next: PartitionState): Promise<true | Stale> {
    const before = this.cluster.cache.partitionState(topic.name, partition);
    const written = await this.cluster.alterPartitionState(topic.id, partition, next.partitionEpoch - 1,
      { leader: next.leader, leaderEpoch: next.leaderEpoch, isr: [...next.isr] });
    if (!written.ok) return STALE;
    const fields = { topic: topic.name, partition, oldLeader: before?.leader, newLeader: next.leader, leaderEpoch: next.leaderEpoch, isr: next.isr };
    if (before && isUncleanElection(before, next)) {
      this.options.logger?.warn(fields, 'unclean leader election (ElectLeaders): records only the old ISR had are lost');
    } else {
      this.options.logger?.info(fields, 'partition leader elected (ElectLeaders)');
    }
    return true;
  }

  /** Puts what `change` makes of the topic's assignment, if the topic is still as `topic` shows it. */
  private async rewrite(topic: TopicRecord, change: (a: TopicAssignment) => TopicAssignment): Promise<boolean> {
    const modRevision = this.modRevisionOf(topic);
    const assignment = this.cluster.cache.topic(topic.name);
    if (modRevision === undefined || !assignment) return false;
    return this.cluster.putTopic(change(assignment), modRevision);
  }

  /** The mod revision of the topic's key if it still holds that topic (same id). */
  private modRevisionOf(topic: TopicRecord): number | undefined {
    const cache = this.cluster.cache;
    return cache.topic(topic.name)?.id === topic.id ? cache.topicModRevision(topic.name) : undefined;
  }

  /**
   * Waits until every partition from `fromPartition` on of topic `id` has a state (the active
   * controller's), and answers the topic; REQUEST_TIMED_OUT after the timeout, as Kafka's
   * ZooKeeper-mode CreateTopics did when the brokers' metadata did not show the topic in time.
   */
  private async awaitPartitionStates(id: string, fromPartition: number): Promise<TopicRecord | Outcome> {
    const cache = this.cluster.cache;
    const ready = (): boolean => {
      const topic = this.topicById(id);
      return !topic || topic.partitions.slice(fromPartition).every((p) => cache.partitionState(topic.name, p.index) !== undefined);
    };
    const inTime = await new Promise<boolean>((resolve) => {
      const done = (result: boolean): void => {
        clearTimeout(timer);
        cache.off('change', check);
        resolve(result);
      };
      const check = (): void => {
        if (ready()) done(true);
      };
      const timer = setTimeout(() => done(false), this.options.partitionStateTimeoutMs ?? DEFAULT_PARTITION_STATE_TIMEOUT_MS);
      cache.on('change', check);
      check();
    });
    const topic = this.topicById(id);
    if (!topic) return fail(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 'The topic was deleted while it was being created.');
    if (!inTime) return fail(ErrorCode.REQUEST_TIMED_OUT, `Timed out waiting for the controller to elect the leaders of topic ${topic.name}.`);
    return topic;
  }

  private onCacheChange(): void {
    this.view = null;
    const ids = this.topicIds();
    const gone = [...this.knownIds].filter(([name, id]) => ids.get(name) !== id).map(([name]) => name);
    this.knownIds = ids;
    for (const name of gone) this.deleted(name);
  }

  private topicIds(): Map<string, string> {
    return new Map(this.cluster.cache.topics().map((t) => [t.name, t.id]));
  }

  private topicView(): TopicView {
    if (this.view) return this.view;
    const cache = this.cluster.cache;
    const sorted = cache.topics().map((t): TopicRecord => ({
      name: t.name,
      id: t.id,
      partitions: t.replicas.map((replicas, index): PartitionRecord => {
        // A partition the controller has not given a state yet: no leader, nobody in sync.
        const state = cache.partitionState(t.name, index);
        const reassignment = t.reassignments?.[index];
        const partition = { index, replicas, leader: state?.leader ?? -1, leaderEpoch: state?.leaderEpoch ?? 0, isr: state?.isr ?? [] };
        return reassignment ? { ...partition, reassignment } : partition;
      }),
      configs: t.configs,
    })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    this.view = { byName: new Map(sorted.map((t) => [t.name, t])), byId: new Map(sorted.map((t) => [t.id, t])), sorted };
    return this.view;
  }
}
