// The group coordinator as the broker runs it: its settings from the broker config (Kafka's names)
// and its start-up: create __consumer_offsets if it is missing, then load the partitions this
// broker leads (a single broker: all of them). Until then the group APIs answer
// COORDINATOR_LOAD_IN_PROGRESS, which clients retry.
import type { Logger } from 'pino';
import { ErrorCode } from '../common/errors';
import type { BrokerConfig } from '../config/broker-config';
import type { Controller } from '../cluster/controller';
import type { PartitionRecord } from '../cluster/metadata-store';
import type { ReplicaManager } from '../replica/replica-manager';
import { GroupCoordinator, type GroupCoordinatorConfig, type GroupCoordinatorDeps } from './coordinator';
import { OffsetsLog, OFFSETS_TOPIC } from './offsets-log';

export { GroupCoordinator } from './coordinator';

export function groupCoordinatorConfig(config: BrokerConfig): GroupCoordinatorConfig {
  return {
    minSessionTimeoutMs: config.getInt('group.min.session.timeout.ms'),
    maxSessionTimeoutMs: config.getInt('group.max.session.timeout.ms'),
    maxSize: config.getInt('group.max.size'),
    initialRebalanceDelayMs: config.getInt('group.initial.rebalance.delay.ms'),
    offsetMetadataMaxBytes: config.getInt('offset.metadata.max.bytes'),
    offsetsRetentionMs: config.getInt('offsets.retention.minutes') * 60_000,
    offsetsRetentionCheckIntervalMs: config.getLong('offsets.retention.check.interval.ms'),
    consumerSessionTimeoutMs: config.getInt('group.consumer.session.timeout.ms'),
    consumerHeartbeatIntervalMs: config.getInt('group.consumer.heartbeat.interval.ms'),
    consumerMaxSize: config.getInt('group.consumer.max.size'),
    consumerAssignors: config.getList('group.consumer.assignors'),
    consumerMigrationPolicy: config.getString('group.consumer.migration.policy'),
    consumerAssignmentIntervalMs: config.getInt('group.consumer.assignment.interval.ms'),
    streamsSessionTimeoutMs: config.getInt('group.streams.session.timeout.ms'),
    streamsHeartbeatIntervalMs: config.getInt('group.streams.heartbeat.interval.ms'),
    streamsNumStandbyReplicas: config.getInt('group.streams.num.standby.replicas'),
    streamsInitialRebalanceDelayMs: config.getInt('group.streams.initial.rebalance.delay.ms'),
    shareSessionTimeoutMs: config.getInt('group.share.session.timeout.ms'),
    shareHeartbeatIntervalMs: config.getInt('group.share.heartbeat.interval.ms'),
    shareMaxSize: config.getInt('group.share.max.size'),
    shareAssignmentIntervalMs: config.getInt('group.share.assignment.interval.ms'),
  };
}

/**
 * `controller`: the topics consumer groups assign, each group's configs (GROUP config resources),
 * and the creation of streams groups' internal topics (as Kafka's broker creates them). `share`:
 * what share groups ask of the share coordinator (without it their share-partitions count as
 * initialized at once and a deletion deletes no state).
 */
export function createGroupCoordinator(config: BrokerConfig, replicas: ReplicaManager, controller: Controller, log: Logger,
  share: Pick<GroupCoordinatorDeps, 'initializeShareState' | 'onShareGroupDeleted' | 'metrics'> = {}): GroupCoordinator {
  return new GroupCoordinator(groupCoordinatorConfig(config), replicas.timer, log.child({ component: 'group-coordinator' }), Date.now,
    {
      ...share,
      topics: controller, groupConfig: (groupId) => controller.groupConfigs(groupId),
      createInternalTopics: async (topics) => {
        for (const t of topics) {
          const res = await controller.createTopic({ ...t, assignments: [] }, false);
          if (res.errorCode !== ErrorCode.NONE && res.errorCode !== ErrorCode.TOPIC_ALREADY_EXISTS) {
            log.warn({ topic: t.name, errorCode: res.errorCode, errorMessage: res.errorMessage }, 'could not create an internal topic of a streams group');
          }
        }
      },
    });
}

/**
 * The single broker's start: creates __consumer_offsets (offsets.topic.num.partitions, compacted)
 * unless it exists, then elects every partition at its current leader epoch and resolves once they
 * are loaded. An existing topic keeps its partition count, as in Kafka. Never rejects: a failure is
 * logged and the coordinator stays unavailable. If the topic is deleted (Kafka allows it), every
 * partition resigns and the coordinator starts over with a new topic.
 */
export function startGroupCoordinator(
  coordinator: GroupCoordinator, config: BrokerConfig, controller: Controller, replicas: ReplicaManager, log: Logger,
): Promise<void> {
  controller.onTopicDeleted(OFFSETS_TOPIC, () => {
    log.warn(`${OFFSETS_TOPIC} was deleted: every group is dropped and the topic created again`);
    coordinator.unloadAll();
    void electEveryPartition(coordinator, config, controller, replicas, log);
  });
  return electEveryPartition(coordinator, config, controller, replicas, log);
}

/**
 * Creates __consumer_offsets unless it exists (its replication factor capped by the live brokers)
 * and hands it to the coordinator (attachOffsetsTopic), which then hosts no partition until
 * onElection: what a broker of a cluster does before following the partitions' leadership. The
 * topic's partitions, or null (logged) when it could not be created.
 */
export async function ensureOffsetsTopic(
  coordinator: GroupCoordinator, config: BrokerConfig, controller: Controller, replicas: ReplicaManager, log: Logger,
): Promise<readonly PartitionRecord[] | null> {
  try {
    const created = await OffsetsLog.ensureTopic(controller, config.getInt('offsets.topic.num.partitions'),
      config.getInt('offsets.topic.replication.factor'), config.getInt('offsets.topic.segment.bytes'));
    const topic = controller.topic(OFFSETS_TOPIC);
    if (!topic) throw new Error(`could not create ${OFFSETS_TOPIC}: ${created.errorMessage ?? created.errorCode}`);
    attachOffsetsTopic(coordinator, replicas, topic.partitions.length, log);
    return topic.partitions;
  } catch (err) {
    log.error({ err }, 'the group coordinator could not start');
    return null;
  }
}

/**
 * Hands the coordinator __consumer_offsets as it exists with `numPartitions` partitions (a cluster's
 * broker knows them from the metadata): call it before the first onElection, which it ignores until then.
 */
export function attachOffsetsTopic(coordinator: GroupCoordinator, replicas: ReplicaManager, numPartitions: number, log: Logger): void {
  coordinator.useOffsetsTopic(new OffsetsLog(replicas, numPartitions, log), numPartitions);
}

async function electEveryPartition(
  coordinator: GroupCoordinator, config: BrokerConfig, controller: Controller, replicas: ReplicaManager, log: Logger,
): Promise<void> {
  const partitions = await ensureOffsetsTopic(coordinator, config, controller, replicas, log);
  for (const p of partitions ?? []) coordinator.onElection(p.index, p.leaderEpoch);
  await coordinator.loaded();
}
