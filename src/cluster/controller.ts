// The one place where topics are created, deleted, grown, reconfigured and reassigned, where leaders
// are elected on request, and where groups' configs and the dynamic broker configs are set (the latter
// applied to this broker's BrokerConfig), and the users' SCRAM credentials (which SCRAM logins read
// here). Handlers (CreateTopics, Metadata's auto-creation, DeleteTopics, CreatePartitions,
// AlterConfigs...) call it and turn its results into their own response shapes; the rules and Kafka's
// error codes live here.
//
// Operations that change topics (create, delete, create partitions, alter configs) run one at a
// time, in the order they arrive, as Kafka's controller applies them from its event queue: each
// one's checks see every earlier operation complete, metadata and logs alike. So a name being
// deleted cannot be re-created until its logs are gone (a creation waits its turn), and two
// requests racing to create the same topic get NONE and TOPIC_ALREADY_EXISTS. Reads (topic(),
// topics()) are never queued: a topic leaves them when its deletion starts and appears when its
// creation is persisted.
//
// Where metadata lives is the backend's business (metadata-backend.ts): the single broker's
// MetadataStore, or, in a cluster, etcd (etcd/etcd-metadata.ts). In a cluster the in-turn queue
// orders one broker's requests; requests on different brokers race in etcd, whose conditional
// writes let exactly one win, and the loser's checks run again on what is there now. A cluster's
// new topic shows in reads once written, its partitions leaderless until the active controller
// gives them states (createTopic itself answers only after that).
import { ErrorCode, errorMessage, quoteInMessage } from '../common/errors';
import type { BrokerConfig } from '../config/broker-config';
import { MIN_SEGMENT_BYTES } from '../config/definitions';
import { consumerGroupConfig, validateGroupConfigs, type ConsumerGroupConfig } from '../config/group-config';
import { resolveTopicConfig, validateTopicConfigs } from '../config/topic-config';
import type { TopicRecord } from './metadata-store';
import { bindingKey, filterMatches, type AclBinding, type AclBindingFilter } from '../security/acl-binding';
import { STALE, fail, type BrokerEndpoint, type MetadataBackend, type Outcome, type Stale } from './metadata-backend';
import { validateTopicName, topicCollision, isInternalTopic } from './topic-names';
import {
  alterationEntity, entityKey, entityText, planAlteration, type QuotaAlteration, type QuotaEntity, type QuotaTable, type QuotaValues,
} from './client-quotas';
import type { MutationQuota } from './client-quota-manager';
import { placeReplicas, mathRandomInt, type Placement } from './replica-placement';
import { requestedElection, type RequestedElection } from './partition-change';
import { planScramAlterations, type ScramAlterationResult, type ScramDeletion, type ScramUpsertion } from './scram-alterations';
import type { ScramCredential, ScramCredentialLookup, ScramMechanism } from '../security/sasl';
import type { UserScramCredentials } from '../security/scram';
import {
  reassignmentInProgress, revertReassignment, startReassignment, targetReplicationFactor, type ReplicaAssignment,
} from './partition-reassignment';

/**
 * Kafka's ReplicationControlManager.MAX_PARTITIONS_PER_BATCH: one CreateTopics (or, here, one
 * CreatePartitions) may ask for at most this many partitions in all; more once ran Kafka's
 * controller out of memory, and numPartitions=2147483647 did the same to Fjord.
 */
export const MAX_PARTITIONS_PER_REQUEST = 10_000;
const TOO_MANY_PARTITIONS = 'Excessively large number of partitions per request.';

export type { BrokerEndpoint, Outcome, TopicStorage } from './metadata-backend';

/** How often an operation runs its checks again after losing a race to another broker's change of the topic. */
const STALE_RETRIES = 5;

const OK: Outcome = { errorCode: ErrorCode.NONE, errorMessage: null };
const isOutcome = (x: object): x is Outcome => typeof (x as Partial<Outcome>).errorCode === 'number';

/** One topic's part of an ElectLeaders answer: each partition's outcome, in the order asked. */
export interface TopicElectionResults {
  topic: string;
  partitions: { partition: number; outcome: Outcome }[];
}

export interface NewTopic {
  name: string;
  numPartitions: number;            // -1: num.partitions
  replicationFactor: number;        // -1: default.replication.factor
  assignments: { partitionIndex: number; brokerIds: number[] }[];
  configs: Record<string, string>;
}

/**
 * The segment size of an internal topic comes from offsets.topic.segment.bytes or
 * transaction.state.log.segment.bytes, which Kafka bounds only by 1; below the 1 MiB that Kafka 4
 * requires of segment.bytes (where Kafka would fail to create the topic), it is given as
 * internal.segment.bytes, which has no such minimum.
 */
function withInternalSegmentBytes(configs: Record<string, string>): Record<string, string> {
  const segmentBytes = configs['segment.bytes'];
  if (segmentBytes === undefined || Number(segmentBytes) >= MIN_SEGMENT_BYTES) return configs;
  const { 'segment.bytes': _, ...rest } = configs;
  return { ...rest, 'internal.segment.bytes': segmentBytes };
}

/** One partition's entry of AlterPartitionReassignments: its target replicas, or null to cancel. */
export interface PartitionTarget {
  partition: number;
  replicas: number[] | null;
}

/** A topic's reassignments in progress, as ListPartitionReassignments answers them. */
export interface OngoingReassignment {
  name: string;
  partitions: { partition: number; replicas: number[]; adding: number[]; removing: number[] }[];
}

export class Controller implements ScramCredentialLookup {
  /** Settles when the last queued operation has finished (whether it succeeded or threw). */
  private queueTail: Promise<unknown> = Promise.resolve();
  /** Called once a topic of that name has been deleted (see onTopicDeleted): the coordinators' internal topics. */
  private readonly deletionListeners = new Map<string, () => void>();

  /**
   * A single broker: `new Controller(new LocalMetadata(store, self, storage), config)`; a cluster
   * member: `new Controller(new EtcdMetadata(cluster, { listenerName }), config)`.
   */
  constructor(
    private readonly backend: MetadataBackend,
    private readonly config: BrokerConfig,
  ) {
    backend.onTopicDeleted((name) => this.deletionListeners.get(name)?.());
    backend.onBrokerConfigsChanged(() => this.applyBrokerConfigs());
    this.applyBrokerConfigs();
  }

  /** This broker's dynamic configs and the cluster-wide ones, as the metadata holds them, into its BrokerConfig. */
  private applyBrokerConfigs(): void {
    this.config.setDynamicConfigs(this.backend.brokerConfigs(String(this.config.nodeId)), this.backend.brokerConfigs(''));
  }

  /** See MetadataBackend.brokers: by default the inter-broker endpoints; given a listener, that listener's. */
  brokers(listenerName?: string): BrokerEndpoint[] {
    return this.backend.brokers(listenerName);
  }

  get controllerId(): number {
    return this.backend.controllerId;
  }

  topic(name: string): TopicRecord | undefined {
    return this.backend.topic(name);
  }

  topicById(id: string): TopicRecord | undefined {
    return this.backend.topicById(id);
  }

  topics(): TopicRecord[] {
    return this.backend.topics();
  }

  /**
   * Kafka's validateTotalNumberOfPartitions, checked before anything else of a CreateTopics
   * request: the partitions it asks for (num.partitions for -1, the assignments when given) must
   * not exceed MAX_PARTITIONS_PER_REQUEST, or the whole request is POLICY_VIOLATION.
   */
  checkPartitionsToCreate(topics: readonly Pick<NewTopic, 'numPartitions' | 'assignments'>[]): Outcome | null {
    let total = 0;
    for (const t of topics) {
      if (t.assignments.length > 0) total += t.assignments.length;
      else if (t.numPartitions === -1) total += this.config.getInt('num.partitions');
      else if (t.numPartitions > 0) total += t.numPartitions;
    }
    return total > MAX_PARTITIONS_PER_REQUEST ? fail(ErrorCode.POLICY_VIOLATION, TOO_MANY_PARTITIONS) : null;
  }

  /**
   * The same cap for CreatePartitions, on the partitions a request adds to existing topics (Kafka
   * caps one controller operation at 10,000 records, one per new partition).
   */
  checkPartitionsToAdd(grows: readonly { name: string; count: number }[]): Outcome | null {
    let total = 0;
    for (const g of grows) {
      const current = this.backend.topic(g.name)?.partitions.length;
      if (current !== undefined && g.count > current) total += g.count - current;
    }
    return total > MAX_PARTITIONS_PER_REQUEST ? fail(ErrorCode.POLICY_VIOLATION, TOO_MANY_PARTITIONS) : null;
  }

  /**
   * Validates and (unless validateOnly) creates a topic; the created or would-be record on success.
   * A topic that passes every check is charged to the request's controller mutation quota, if any.
   */
  createTopic(t: NewTopic, validateOnly: boolean, quota?: MutationQuota): Promise<Outcome & { topic?: TopicRecord }> {
    return this.inTurn(async () => {
      const planned = this.planTopic(t);
      if ('errorCode' in planned) return planned;
      const throttled = quota?.charge(planned.topic.partitions.length);
      if (throttled) return throttled;
      if (validateOnly) return { ...OK, topic: planned.topic };
      const created = await this.backend.createTopic(planned.topic.name, planned.topic.partitions.map((p) => [...p.replicas]), t.configs);
      if (created === STALE) return STALE;
      return isOutcome(created) ? created : { ...OK, topic: created };
    });
  }

  /**
   * Runs `op` once every operation queued before it has finished; again (up to STALE_RETRIES
   * times) while it answers STALE, having lost a race to another broker.
   */
  private inTurn<T>(op: () => Promise<T | Stale>, what = 'The topic'): Promise<T | Outcome> {
    const attempts = async (): Promise<T | Outcome> => {
      for (let i = 0; i < STALE_RETRIES; i++) {
        const result = await op();
        if (result !== STALE) return result;
      }
      return fail(ErrorCode.REQUEST_TIMED_OUT, `${what} kept changing under this request; try again.`);
    };
    const result = this.queueTail.then(attempts);
    this.queueTail = result.catch(() => undefined);
    return result;
  }

  /**
   * Creates an internal topic (__consumer_offsets, __transaction_state) with the given configs unless
   * it exists; the replication factor is capped at the live brokers (their *.replication.factor
   * defaults to 3). In turn like any topic operation, so on a single broker every call returns
   * once the topic's partitions are open, whichever call created it; in a cluster, once the topic
   * is in etcd (another broker's creation may still await its leaders, and logs follow leadership).
   */
  async ensureInternalTopic(name: string, numPartitions: number, replicationFactor: number, configs: Record<string, string>): Promise<Outcome> {
    const rf = Math.max(1, Math.min(replicationFactor, this.brokers().length));
    const res = await this.createTopic({ name, numPartitions, replicationFactor: rf, assignments: [], configs: withInternalSegmentBytes(configs) }, false);
    return res.errorCode === ErrorCode.TOPIC_ALREADY_EXISTS ? OK : { errorCode: res.errorCode, errorMessage: res.errorMessage };
  }

  private planTopic(t: NewTopic): Outcome | { topic: TopicRecord } {
    const nameError = validateTopicName(t.name);
    if (nameError) return fail(ErrorCode.INVALID_TOPIC_EXCEPTION, nameError);
    if (this.backend.topic(t.name)) return fail(ErrorCode.TOPIC_ALREADY_EXISTS, `Topic '${t.name}' already exists.`);
    const collision = topicCollision(t.name, this.backend.topics().map((x) => x.name));
    if (collision) return fail(ErrorCode.INVALID_TOPIC_EXCEPTION, `Topic '${t.name}' collides with existing topic: ${collision}`);

    let replicas: number[][];
    if (t.assignments.length > 0) {
      if (t.numPartitions !== -1 || t.replicationFactor !== -1) {
        return fail(ErrorCode.INVALID_REQUEST, 'Both numPartitions or replicationFactor and replicasAssignments were set. Both cannot be used at the same time.');
      }
      // Kafka checks each assignment in turn: a partition named again, then its replicas.
      const seen = new Set<number>();
      let rf: number | null = null;
      for (const a of t.assignments) {
        if (seen.has(a.partitionIndex)) {
          return fail(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `Found multiple manual partition assignments for partition ${a.partitionIndex}`);
        }
        seen.add(a.partitionIndex);
        const invalid = this.checkReplicaList(a.brokerIds, rf);
        if (invalid) return invalid;
        rf = a.brokerIds.length;
      }
      const sorted = [...t.assignments].sort((a, b) => a.partitionIndex - b.partitionIndex);
      if (sorted.some((a, i) => a.partitionIndex !== i)) {
        return fail(ErrorCode.INVALID_REPLICA_ASSIGNMENT, 'partitions should be a consecutive 0-based integer sequence');
      }
      replicas = sorted.map((a) => a.brokerIds);
    } else {
      const partitions = t.numPartitions === -1 ? this.config.getInt('num.partitions') : t.numPartitions;
      const rf = t.replicationFactor === -1 ? this.config.getInt('default.replication.factor') : t.replicationFactor;
      if (partitions <= 0) return fail(ErrorCode.INVALID_PARTITIONS, 'Number of partitions was set to an invalid non-positive value.');
      if (rf <= 0) return fail(ErrorCode.INVALID_REPLICATION_FACTOR, 'Replication factor must be larger than 0, or -1 to use the default value.');
      const placement = this.placeReplicas(partitions, rf);
      if ('error' in placement) {
        return fail(ErrorCode.INVALID_REPLICATION_FACTOR, `Unable to replicate the partition ${rf} time(s): ${placement.error}`);
      }
      replicas = placement.replicas;
    }
    const configError = validateTopicConfigs(t.configs, this.config);
    if (configError) return fail(ErrorCode.INVALID_CONFIG, configError.message);
    return {
      topic: {
        name: t.name,
        id: '0'.repeat(32),
        partitions: replicas.map((r, index) => ({ index, replicas: r, leader: r[0], leaderEpoch: 0, isr: r })),
        configs: { ...t.configs },
      },
    };
  }

  deleteTopic(name: string, quota?: MutationQuota): Promise<Outcome & { topic?: TopicRecord }> {
    return this.inTurn(async () => {
      if (!this.config.getBool('delete.topic.enable')) {
        return fail(ErrorCode.TOPIC_DELETION_DISABLED, 'Topic deletion is disabled.');
      }
      const topic = this.backend.topic(name);
      if (!topic) return fail(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 'This server does not host this topic-partition.');
      const throttled = quota?.charge(topic.partitions.length);
      if (throttled) return throttled;
      const deleted = await this.backend.deleteTopic(topic);
      return deleted === STALE ? STALE : { ...OK, topic: deleted };
    });
  }

  /**
   * Calls `listener` each time the topic `name` has been deleted (in a cluster: once this broker's
   * cache shows it gone, whichever broker deleted it). Kafka lets DeleteTopics delete
   * __consumer_offsets and __transaction_state; their coordinators resign and start over with a new,
   * empty topic rather than stay down.
   */
  onTopicDeleted(name: string, listener: () => void): void {
    this.deletionListeners.set(name, listener);
  }

  createPartitions(name: string, count: number, assignments: number[][] | null, validateOnly: boolean, quota?: MutationQuota): Promise<Outcome> {
    return this.inTurn(() => this.growTopic(name, count, assignments, validateOnly, quota));
  }

  private async growTopic(name: string, count: number, assignments: number[][] | null, validateOnly: boolean,
    quota: MutationQuota | undefined): Promise<Outcome | Stale> {
    const topic = this.backend.topic(name);
    if (!topic) return fail(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 'This server does not host this topic-partition.');
    // A group's (or transactional id's) partition is its key's hash modulo the partition count:
    // more partitions would move every coordinator key away from its state.
    if (isInternalTopic(name)) {
      return fail(ErrorCode.POLICY_VIOLATION, `Cannot add partitions to the internal topic ${name}: its keys would move to other partitions.`);
    }
    const current = topic.partitions.length;
    // KRaft's texts (ReplicationControlManager.createPartitions).
    if (count === current) return fail(ErrorCode.INVALID_PARTITIONS, `Topic already has ${current} partition(s).`);
    if (count < current) {
      return fail(ErrorCode.INVALID_PARTITIONS, `The topic ${name} currently has ${current} partition(s); ${count} would not be an increase.`);
    }
    const added = count - current;
    let replicas: number[][];
    if (assignments) {
      if (assignments.length !== added) {
        return fail(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `Attempted to add ${added} additional partition(s), but only ${assignments.length} assignment(s) were specified.`);
      }
      // A partition under reassignment counts with the replication factor it is heading for.
      const first = topic.partitions[0];
      const invalid = this.checkAssignments(assignments, first ? targetReplicationFactor(first.replicas, first.reassignment) : null);
      if (invalid) return invalid;
      replicas = assignments;
    } else {
      // Kafka's CreatePartitions takes partition 0's replication factor, and its error unprefixed.
      const placement = this.placeReplicas(added, topic.partitions[0]?.replicas.length ?? 1);
      if ('error' in placement) return fail(ErrorCode.INVALID_REPLICATION_FACTOR, placement.error);
      replicas = placement.replicas;
    }
    const throttled = quota?.charge(added);
    if (throttled) return throttled;
    if (validateOnly) return OK;
    const grown = await this.backend.addPartitions(topic, replicas);
    return grown === STALE || isOutcome(grown) ? grown : OK;
  }

  /**
   * Replaces a topic's overrides with what `next` makes of the current ones, in the topic's turn (so
   * IncrementalAlterConfigs edits what the previous change left): a whole new set for AlterConfigs,
   * edited overrides for IncrementalAlterConfigs, or an error Outcome.
   */
  setTopicConfigs(name: string, next: (current: Readonly<Record<string, string>>) => Record<string, string> | Outcome,
    validateOnly: boolean): Promise<Outcome> {
    return this.inTurn(async () => {
      const topic = this.backend.topic(name);
      if (!topic) return fail(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 'This server does not host this topic-partition.');
      const configs = next(topic.configs);
      if (isOutcome(configs)) return configs;
      const configError = validateTopicConfigs(configs, this.config);
      if (configError) return fail(ErrorCode.INVALID_CONFIG, configError.message);
      if (validateOnly) return OK;
      return (await this.backend.setTopicConfigs(topic, configs)) === STALE ? STALE : OK;
    });
  }

  /**
   * ElectLeaders (Kafka's ReplicationControlManager.electLeaders): per partition asked, NONE once the
   * new leader is written (the metadata shows it), ELECTION_NOT_NEEDED, PREFERRED_LEADER_NOT_AVAILABLE
   * or ELIGIBLE_LEADERS_NOT_AVAILABLE (partition-change.ts requestedElection), or
   * UNKNOWN_TOPIC_OR_PARTITION. `partitions` null asks for every partition of every topic, and the
   * answer then leaves out the ELECTION_NOT_NEEDED ones (each topic is listed even so). A partition
   * asked twice is elected once and answered twice. Not in the topic operations' turn: each write is
   * conditioned on the partition's epoch, and computed again (up to STALE_RETRIES times) when another
   * change of the partition (a leader's ISR change, the active controller's) got in first.
   */
  async electLeaders(type: RequestedElection, partitions: readonly { topic: string; partitions: readonly number[] }[] | null): Promise<TopicElectionResults[]> {
    const asked = partitions ?? this.backend.topics().map((t) => ({ topic: t.name, partitions: t.partitions.map((p) => p.index) }));
    const outcomes = new Map<string, Promise<Outcome>>();
    const outcomeOf = (topic: string, partition: number): Promise<Outcome> => {
      const key = `${partition}:${topic}`;
      let outcome = outcomes.get(key);
      if (!outcome) outcomes.set(key, outcome = this.electLeader(type, topic, partition));
      return outcome;
    };
    const results = await Promise.all(asked.map(async (t) => ({
      topic: t.topic,
      partitions: await Promise.all(t.partitions.map(async (partition) => ({ partition, outcome: await outcomeOf(t.topic, partition) }))),
    })));
    if (partitions !== null) return results;
    return results.map((t) => ({ ...t, partitions: t.partitions.filter((p) => p.outcome.errorCode !== ErrorCode.ELECTION_NOT_NEEDED) }));
  }

  private async electLeader(type: RequestedElection, name: string, partition: number): Promise<Outcome> {
    for (let i = 0; i < STALE_RETRIES; i++) {
      const topic = this.backend.topic(name);
      if (!topic) return fail(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `No such topic as ${quoteInMessage(name)}`);
      if (!topic.partitions[partition]) return fail(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `No such partition as ${quoteInMessage(name)}-${partition}`);
      const live = new Set(this.backend.brokers().map((b) => b.nodeId));
      const state = this.backend.partitionState(topic, partition);
      const next = state ? requestedElection(state, type, (id) => live.has(id)) : 'not-possible';
      // Kafka answers these with the errors' own messages.
      if (next === 'not-needed') return fail(ErrorCode.ELECTION_NOT_NEEDED, errorMessage(ErrorCode.ELECTION_NOT_NEEDED));
      if (next === 'not-possible') {
        const errorCode = type === 'preferred' ? ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE : ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE;
        return fail(errorCode, errorMessage(errorCode));
      }
      if ((await this.backend.writePartitionState(topic, partition, next)) !== STALE) return OK;
    }
    return fail(ErrorCode.REQUEST_TIMED_OUT, `The partition ${name}-${partition} kept changing under this election; try again.`);
  }

  /**
   * AlterPartitionReassignments for one topic (Kafka's ReplicationControlManager
   * alterPartitionReassignment): per partition, a target replica list starts (or replaces) a
   * reassignment, null cancels the one in progress. One outcome per entry; the accepted ones are
   * written together, conditioned on the topic as read. The active controller does the rest
   * (etcd/cluster-controller.ts): completion once the adding replicas are in sync, the ISR and
   * leader fitted after a cancel.
   */
  async alterPartitionReassignments(name: string, targets: readonly PartitionTarget[], allowReplicationFactorChange: boolean): Promise<Outcome[]> {
    const result = await this.inTurn(async (): Promise<Outcome[] | Stale> => {
      const topic = this.backend.topic(name);
      if (!topic) return targets.map(() => fail(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `Unable to find a topic named ${quoteInMessage(name)}.`));
      const changes = new Map<number, ReplicaAssignment>();
      const outcomes = targets.map((target): Outcome => {
        const partition = topic.partitions[target.partition];
        if (!partition) return fail(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `Unable to find partition ${quoteInMessage(name)}:${target.partition}.`);
        const current = changes.get(target.partition) ?? { replicas: partition.replicas, reassignment: partition.reassignment ?? null };
        const next = target.replicas === null
          ? this.cancelReassignment(topic, partition.isr, target.partition, current)
          : this.changeReassignment(current, target.replicas, allowReplicationFactorChange);
        if (next && 'errorCode' in next) return next;
        if (next) changes.set(target.partition, next);
        return OK;
      });
      if (changes.size === 0) return outcomes;
      return (await this.backend.reassignPartitions(topic, changes)) === STALE ? STALE : outcomes;
    });
    return Array.isArray(result) ? result : targets.map(() => result);
  }

  private changeReassignment(current: ReplicaAssignment, target: number[], allowReplicationFactorChange: boolean): ReplicaAssignment | Outcome | null {
    const invalid = this.checkReplicaList(target, null);
    if (invalid) return invalid;
    const replicationFactor = targetReplicationFactor(current.replicas, current.reassignment);
    if (!allowReplicationFactorChange && replicationFactor !== target.length) {
      return fail(ErrorCode.INVALID_REPLICATION_FACTOR, `The replication factor is changed from ${replicationFactor} to ${target.length}`);
    }
    return startReassignment(current, target);
  }

  private cancelReassignment(topic: TopicRecord, isr: readonly number[], partition: number, current: ReplicaAssignment): ReplicaAssignment | Outcome {
    if (!reassignmentInProgress(current.reassignment)) return fail(ErrorCode.NO_REASSIGNMENT_IN_PROGRESS, 'No partition reassignment is in progress.');
    const revert = revertReassignment(current.replicas, isr, current.reassignment);
    if (revert.unclean && !resolveTopicConfig(this.config, topic.configs).uncleanLeaderElectionEnable) {
      return fail(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
        `Unable to revert partition assignment for ${topic.name}:${partition} because it would require an unclean leader election.`);
    }
    return { replicas: revert.replicas, reassignment: null };
  }

  /**
   * ListPartitionReassignments: the reassignments in progress of every topic (null) or of the named
   * partitions; partitions (and topics) not being reassigned, or unknown, are left out.
   */
  listPartitionReassignments(topics: readonly { name: string; partitions: readonly number[] }[] | null): OngoingReassignment[] {
    const named = topics ?? this.backend.topics().map((t) => ({ name: t.name, partitions: t.partitions.map((p) => p.index) }));
    const ongoing: OngoingReassignment[] = [];
    for (const { name, partitions } of named) {
      const topic = this.backend.topic(name);
      const found = partitions.flatMap((index) => {
        const p = topic?.partitions[index];
        return p && reassignmentInProgress(p.reassignment)
          ? [{ partition: index, replicas: [...p.replicas], adding: [...p.reassignment.adding], removing: [...p.reassignment.removing] }]
          : [];
      });
      if (found.length > 0) ongoing.push({ name, partitions: found });
    }
    return ongoing;
  }

  /** A group's config overrides (GROUP config resources; empty: none). They outlive the group, as in Kafka. */
  groupConfigs(groupId: string): Readonly<Record<string, string>> {
    return this.backend.groupConfigs(groupId);
  }

  /** The groups that have config overrides, sorted. */
  groupsWithConfigs(): string[] {
    return this.backend.groupsWithConfigs();
  }

  /** What the group coordinator takes from a consumer group's configs: each override, else the broker's setting. */
  consumerGroupConfig(groupId: string): ConsumerGroupConfig {
    return consumerGroupConfig(this.config, this.backend.groupConfigs(groupId));
  }

  /**
   * Replaces a group's overrides with what `next` makes of the current ones, in turn with the topic
   * operations (so IncrementalAlterConfigs edits what the previous change left); the result is
   * checked against the broker's bounds (INVALID_CONFIG).
   */
  setGroupConfigs(groupId: string, next: (current: Readonly<Record<string, string>>) => Record<string, string> | Outcome,
    validateOnly: boolean): Promise<Outcome> {
    return this.inTurn(async () => {
      const configs = next(this.backend.groupConfigs(groupId));
      if (isOutcome(configs)) return configs;
      const configError = validateGroupConfigs(configs, this.config);
      if (configError) return fail(ErrorCode.INVALID_CONFIG, configError.message);
      if (validateOnly) return OK;
      return (await this.backend.setGroupConfigs(groupId, configs)) === STALE ? STALE : OK;
    });
  }

  /** A BROKER config resource's dynamic configs ("" the cluster-wide default, else a node id). */
  brokerConfigs(resource: string): Readonly<Record<string, string>> {
    return this.backend.brokerConfigs(resource);
  }

  /**
   * Replaces a BROKER resource's dynamic configs with what `next` makes of the current ones, in turn
   * with the other operations (so IncrementalAlterConfigs edits what the previous change left),
   * checked as Kafka's DynamicBrokerConfig.validate checks them (INVALID_REQUEST, as Kafka answers).
   * The resource is "" (the cluster-wide default) or this broker's id: Kafka validates a broker's
   * configs on that broker, against its own static ones.
   */
  setBrokerConfigs(resource: string, next: (current: Readonly<Record<string, string>>) => Record<string, string> | Outcome,
    validateOnly: boolean): Promise<Outcome> {
    return this.inTurn(async () => {
      const configs = next(this.backend.brokerConfigs(resource));
      if (isOutcome(configs)) return configs;
      const refusal = this.config.validateDynamicConfigs(configs, resource === '' ? 'default' : 'broker');
      if (refusal !== null) return fail(ErrorCode.INVALID_REQUEST, refusal);
      if (validateOnly) return OK;
      return (await this.backend.setBrokerConfigs(resource, configs)) === STALE ? STALE : OK;
    });
  }

  /** Every client quota entity with its values (DescribeClientQuotas, enforcement). */
  clientQuotas(): QuotaTable {
    return this.backend.clientQuotas();
  }

  /** Calls `listener` after client quotas changed, through any broker. */
  onClientQuotasChanged(listener: () => void): void {
    this.backend.onClientQuotasChanged(listener);
  }

  /**
   * AlterClientQuotas as Kafka's ClientQuotaControlManager: each alteration checked against the values
   * now, the valid ones written together, in turn with the other operations. One outcome per entity,
   * in the order first named; a key given twice or an entity named twice is refused (Kafka then answers
   * "Ignoring duplicate entity" for it, having applied its first alteration).
   */
  alterClientQuotas(alterations: readonly QuotaAlteration[], validateOnly: boolean): Promise<{ entity: Record<string, string | null>; outcome: Outcome }[] | Outcome> {
    return this.inTurn(async () => {
      const table = this.backend.clientQuotas();
      const results = new Map<string, { entity: Record<string, string | null>; outcome: Outcome }>();
      const changes = new Map<string, QuotaValues>();
      for (const a of alterations) {
        const entity = alterationEntity(a.entity);
        const id = JSON.stringify(Object.entries(entity).sort(([x], [y]) => (x < y ? -1 : 1)));
        const keys = a.ops.map((op) => op.key);
        const repeated = keys.find((k, i) => keys.indexOf(k) !== i);
        if (repeated !== undefined || results.has(id)) {
          results.set(id, { entity, outcome: fail(ErrorCode.INVALID_REQUEST, `Ignoring duplicate entity ${entityText(entity)}`) });
          continue;
        }
        const planned = planAlteration(entity, a.ops, table.get(entityKey(entity as QuotaEntity)));
        if ('errorCode' in planned) {
          results.set(id, { entity, outcome: planned });
          continue;
        }
        changes.set(planned.key, planned.values);
        results.set(id, { entity, outcome: OK });
      }
      if (!validateOnly && changes.size > 0 && (await this.backend.setClientQuotas(changes)) === STALE) return STALE;
      return [...results.values()];
    });
  }

  /** A user's credential for a mechanism as the metadata holds it now: what each SCRAM authentication reads. */
  scramCredential(user: string, mechanism: ScramMechanism): ScramCredential | null {
    return this.backend.scramCredentials(user)[mechanism] ?? null;
  }

  /** A user's SCRAM credentials by mechanism (empty: none). */
  scramCredentials(user: string): UserScramCredentials {
    return this.backend.scramCredentials(user);
  }

  /** The users that have SCRAM credentials, sorted. */
  scramUsers(): string[] {
    return this.backend.scramUsers();
  }

  /**
   * AlterUserScramCredentials: Kafka's checks (scram-alterations.ts) on the credentials as they are,
   * then every accepted change in one write, in turn with the other operations (checked again when
   * another broker changed one of the users first). A result per user, in Kafka's order.
   */
  async alterUserScramCredentials(deletions: readonly ScramDeletion[], upsertions: readonly ScramUpsertion[]): Promise<ScramAlterationResult[]> {
    const users = [...new Set([...deletions, ...upsertions].map((a) => a.name))].sort();
    const outcome = await this.inTurn(async () => {
      const plan = planScramAlterations(deletions, upsertions, (user) => this.backend.scramCredentials(user));
      if (plan.changes.size > 0 && (await this.backend.setScramCredentials(plan.changes)) === STALE) return STALE;
      return plan.results;
    }, 'The users\' credentials');
    // Only when another broker kept changing these users: each gets the one error, as Kafka's whole-request failures.
    return isOutcome(outcome) ? users.map((user) => ({ user, ...outcome })) : outcome;
  }

  /** The cluster's ACLs (the same array until they change). */
  acls(): readonly AclBinding[] {
    return this.backend.acls();
  }

  /** Calls `listener` once the ACLs may have changed, wherever they were written. */
  onAclsChanged(listener: () => void): void {
    this.backend.onAclsChanged(listener);
  }

  /**
   * Stores new ACLs (validated by the caller: see invalidNewAcl), in turn with the other changes; an
   * ACL already there is left as it is and counts as created, as Kafka's AclControlManager does.
   */
  createAcls(bindings: readonly AclBinding[]): Promise<void> {
    return this.inTurn(async () => {
      const present = new Set(this.backend.acls().map(bindingKey));
      // Each new ACL once, however often the request names it (a transaction may not write a key twice).
      const added = new Map(bindings.filter((b) => !present.has(bindingKey(b))).map((b) => [bindingKey(b), b]));
      if (added.size > 0) await this.backend.changeAcls([...added.values()], []);
    }).then(() => undefined);
  }

  /**
   * Deletes the ACLs each filter matches (validated by the caller: see invalidFilter), all at once, in
   * turn with the other changes; what each filter matched, as DeleteAcls answers per filter.
   */
  deleteAcls(filters: readonly AclBindingFilter[]): Promise<AclBinding[][]> {
    let matched: AclBinding[][] = [];
    return this.inTurn(async () => {
      const current = this.backend.acls();
      matched = filters.map((f) => current.filter((b) => filterMatches(f, b)));
      const doomed = new Map(matched.flat().map((b) => [bindingKey(b), b]));
      if (doomed.size > 0) await this.backend.changeAcls([], [...doomed.values()]);
    }).then(() => matched);
  }

  /** Kafka's validateManualPartitionAssignment for each list, with the replication factor the topic has. */
  private checkAssignments(assignments: number[][], replicationFactor: number | null): Outcome | null {
    for (const ids of assignments) {
      const invalid = this.checkReplicaList(ids, replicationFactor);
      if (invalid) return invalid;
    }
    return null;
  }

  /**
   * Kafka's validateManualPartitionAssignment: not empty; in ascending order, each broker registered
   * (live, here) and named once; as many as `replicationFactor` when given. Null when valid.
   */
  private checkReplicaList(ids: readonly number[], replicationFactor: number | null): Outcome | null {
    if (ids.length === 0) return fail(ErrorCode.INVALID_REPLICA_ASSIGNMENT, 'The manual partition assignment includes an empty replica list.');
    const known = new Set(this.brokers().map((b) => b.nodeId));
    const sorted = [...ids].sort((a, b) => a - b);
    for (let i = 0; i < sorted.length; i++) {
      if (!known.has(sorted[i])) {
        return fail(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `The manual partition assignment includes broker ${sorted[i]}, but no such broker is registered.`);
      }
      if (i > 0 && sorted[i] === sorted[i - 1]) {
        return fail(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `The manual partition assignment includes the broker ${sorted[i]} more than once.`);
      }
    }
    if (replicationFactor !== null && ids.length !== replicationFactor) {
      return fail(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `The manual partition assignment includes a partition with ${ids.length} replica(s), `
        + `but this is not consistent with previous partitions, which have ${replicationFactor} replica(s).`);
    }
    return null;
  }

  /** Kafka's striped placement over the live brokers (none fenced: a broker here is one that serves). */
  private placeReplicas(numPartitions: number, replicationFactor: number): Placement {
    const brokers = this.brokers().map((b) => ({ id: b.nodeId, rack: b.rack, fenced: false }));
    return placeReplicas(brokers, numPartitions, replicationFactor, mathRandomInt);
  }
}
