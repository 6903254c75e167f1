// The share coordinator as the broker runs it: its settings from the broker config (Kafka's
// share.coordinator.* names), its start-up (replica/coordinator-starter.ts: __share_group_state is
// created on first use, by the first FindCoordinator for a share key or the first persister call; a
// single broker elects every partition of it, at once if the topic exists; in a cluster the replica
// layer elects them as this broker gains their leadership), and the Persister the share-partitions use.
import type { Logger } from 'pino';
import type { Controller } from '../cluster/controller';
import type { BrokerConfig } from '../config/broker-config';
import { CoordinatorStarter } from '../replica/coordinator-starter';
import type { ReplicaManager } from '../replica/replica-manager';
import { ShareCoordinator } from './coordinator';
import { SHARE_STATE_TOPIC, ShareStateLog } from './share-state-log';
import { ShareStatePersister, type RemoteShareState } from './state-persister';

export { ShareCoordinator, type StateChange } from './coordinator';
export { type RemoteShareState } from './state-persister';

export function createShareCoordinator(config: BrokerConfig, controller: Controller, replicas: ReplicaManager, log: Logger): ShareCoordinator {
  const shareLog = log.child({ component: 'share-coordinator' });
  return new ShareCoordinator({
    numPartitions: config.getInt('share.coordinator.state.topic.num.partitions'),
    updatesPerSnapshot: config.getInt('share.coordinator.snapshot.update.records.per.snapshot'),
    pruneIntervalMs: config.getInt('share.coordinator.state.topic.prune.interval.ms'),
  }, new ShareStateLog(replicas, controller, shareLog), controller, shareLog);
}

export function shareCoordinatorStarter(coordinator: ShareCoordinator, config: BrokerConfig, controller: Controller,
  replicas: ReplicaManager, log: Logger, electsPartitions = true): CoordinatorStarter {
  return new CoordinatorStarter(SHARE_STATE_TOPIC, coordinator, () => ShareStateLog.ensureTopic(controller, {
    numPartitions: config.getInt('share.coordinator.state.topic.num.partitions'),
    replicationFactor: config.getInt('share.coordinator.state.topic.replication.factor'),
    segmentBytes: config.getInt('share.coordinator.state.topic.segment.bytes'),
    minInsyncReplicas: config.getInt('share.coordinator.state.topic.min.isr'),
  }), controller, replicas, log, electsPartitions, 'the state of every share-partition');
}

/** The persister of this broker's share-partitions: to its own coordinator, or through `remote` (a cluster) to another broker's. */
export function createSharePersister(coordinator: ShareCoordinator, nodeId: number, controller: Controller, starter: CoordinatorStarter,
  log: Logger, remote?: RemoteShareState): ShareStatePersister {
  return new ShareStatePersister(coordinator, nodeId, controller, () => starter.start(), remote, undefined, log.child({ component: 'share-persister' }));
}
