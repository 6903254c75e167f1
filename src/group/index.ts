// The group coordinator as the broker runs it: its settings from the broker config (Kafka's names)
// and its start-up: create __consumer_offsets if it is missing, read every group and offset back,
// then answer. Until then FindCoordinator answers COORDINATOR_NOT_AVAILABLE and the group APIs
// COORDINATOR_LOAD_IN_PROGRESS, which clients retry.
import type { Logger } from 'pino';
import type { BrokerConfig } from '../config/broker-config';
import type { Controller } from '../cluster/controller';
import type { ReplicaManager } from '../replica/replica-manager';
import { GroupCoordinator, type GroupCoordinatorConfig } from './coordinator';
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
  };
}

export function createGroupCoordinator(config: BrokerConfig, replicas: ReplicaManager, log: Logger): GroupCoordinator {
  return new GroupCoordinator(groupCoordinatorConfig(config), replicas.timer, log.child({ component: 'group-coordinator' }));
}

/**
 * Creates __consumer_offsets (offsets.topic.num.partitions, compacted) unless it exists, then
 * loads the coordinator from it. An existing topic keeps its partition count, as in Kafka. Never
 * rejects: a failure is logged and the coordinator stays unavailable. If the topic is deleted
 * (Kafka allows it), the coordinator drops its groups and starts over with a new topic.
 */
export function startGroupCoordinator(
  coordinator: GroupCoordinator, config: BrokerConfig, controller: Controller, replicas: ReplicaManager, log: Logger,
): Promise<void> {
  controller.onTopicDeleted(OFFSETS_TOPIC, () => {
    log.warn(`${OFFSETS_TOPIC} was deleted: every group is dropped and the topic created again`);
    coordinator.unload();
    void loadGroupCoordinator(coordinator, config, controller, replicas, log);
  });
  return loadGroupCoordinator(coordinator, config, controller, replicas, log);
}

async function loadGroupCoordinator(
  coordinator: GroupCoordinator, config: BrokerConfig, controller: Controller, replicas: ReplicaManager, log: Logger,
): Promise<void> {
  try {
    const created = await OffsetsLog.ensureTopic(controller, config.getInt('offsets.topic.num.partitions'),
      config.getInt('offsets.topic.replication.factor'), config.getInt('offsets.topic.segment.bytes'));
    const topic = controller.topic(OFFSETS_TOPIC);
    if (!topic) throw new Error(`could not create ${OFFSETS_TOPIC}: ${created.errorMessage ?? created.errorCode}`);
    const numPartitions = topic.partitions.length;
    await coordinator.load(new OffsetsLog(replicas, numPartitions, log), numPartitions);
  } catch (err) {
    log.error({ err }, 'the group coordinator could not start');
  }
}
