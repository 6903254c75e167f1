// The transaction coordinator as the broker runs it: its settings from the broker config (Kafka's
// names), its markers (local, and remote when the broker gives a channel to other brokers) and its
// start-up (replica/coordinator-starter.ts). As in Kafka, __transaction_state is created on first use
// (the first FindCoordinator for a transactional id), not at start-up. A single broker elects every
// partition of it at once if the topic exists (transactions a crash interrupted are finished without
// waiting for a client); in cluster mode the replica layer calls onElection/onResignation as this
// broker gains and loses the partitions' leadership. Until a partition is loaded the
// transaction APIs answer COORDINATOR_LOAD_IN_PROGRESS or NOT_COORDINATOR, which clients retry.
import type { Logger } from 'pino';
import type { BrokerConfig } from '../config/broker-config';
import type { Controller } from '../cluster/controller';
import type { GroupCoordinator } from '../group';
import type { ReplicaManager } from '../replica/replica-manager';
import { CoordinatorStarter } from '../replica/coordinator-starter';
import { TransactionCoordinator } from './coordinator';
import { LocalTxnMarkerChannel, TxnMarkerRouter, type TxnMarkerChannel } from './markers';
import { TxnPartitionAdds } from './partition-adds';
import { EPOCH_BUMP_TRANSACTION_VERSION, type TopicPartition } from './transaction-metadata';
import { ErrorCode } from '../common/errors';
import type { ProducerIdManager } from './producer-ids';
import { TRANSACTION_STATE_TOPIC, TransactionStateLog } from './transaction-state-log';

export { TransactionCoordinator } from './coordinator';
export { TxnPartitionAdds } from './partition-adds';
export { LocalTxnMarkerChannel, type TxnMarkerChannel } from './markers';

/**
 * The coordinator, writing markers to the partitions this broker leads itself and to the others
 * through `remoteMarkers` (cluster mode; without it, markers for partitions led elsewhere wait).
 * `transactionVersion` is the finalized transaction.version feature level (Kafka 4's default is 2).
 */
export function createTransactionCoordinator(config: BrokerConfig, controller: Controller, replicas: ReplicaManager,
  groups: GroupCoordinator, producerIds: ProducerIdManager, log: Logger, remoteMarkers?: TxnMarkerChannel,
  transactionVersion: () => number = () => 2): TransactionCoordinator {
  const txnLog = log.child({ component: 'transaction-coordinator' });
  const local = new LocalTxnMarkerChannel({ nodeId: config.nodeId, controller, replicas, groups });
  return new TransactionCoordinator({
    maxTimeoutMs: config.getInt('transaction.max.timeout.ms'),
    transactionalIdExpirationMs: config.getInt('transactional.id.expiration.ms'),
    abortTimedOutIntervalMs: config.getInt('transaction.abort.timed.out.transaction.cleanup.interval.ms'),
    removeExpiredIntervalMs: config.getInt('transaction.remove.expired.transaction.cleanup.interval.ms'),
    transactionVersion,
  }, new TxnMarkerRouter(config.nodeId, controller, local, remoteMarkers, txnLog), producerIds,
  new TransactionStateLog(replicas, controller, transactionVersion, txnLog), txnLog);
}

/** Adds partitions to a transaction another broker coordinates (AddPartitionsToTxn v4+, src/net/txn-partition-adds.ts). */
export interface RemotePartitionAdds {
  add(coordinatorId: number, transactionalId: string, producerId: number, producerEpoch: number, partitions: readonly TopicPartition[]): Promise<number>;
}

/**
 * The partition leaders' adds of transaction version 2 writes: to this broker's coordinator when it
 * leads the id's __transaction_state partition (always on a single broker, which has no `remote`), else
 * to the broker that does.
 */
export function createTxnPartitionAdds(coordinator: TransactionCoordinator, nodeId: number, metadata: Pick<Controller, 'topic'>,
  remote?: RemotePartitionAdds): TxnPartitionAdds {
  return new TxnPartitionAdds((transactionalId, producerId, producerEpoch, partitions) => {
    const leader = metadata.topic(TRANSACTION_STATE_TOPIC)?.partitions[coordinator.partitionFor(transactionalId)]?.leader;
    if (!remote || leader === nodeId) {
      return coordinator.addPartitions(transactionalId, producerId, producerEpoch, partitions, EPOCH_BUMP_TRANSACTION_VERSION);
    }
    if (leader === undefined || leader < 0) return Promise.resolve(ErrorCode.COORDINATOR_NOT_AVAILABLE);
    return remote.add(leader, transactionalId, producerId, producerEpoch, partitions);
  });
}

/** The transaction coordinator's starter: __transaction_state with Kafka's configs from the broker config. */
export function transactionCoordinatorStarter(coordinator: TransactionCoordinator, config: BrokerConfig, controller: Controller,
  replicas: ReplicaManager, log: Logger, electsPartitions = true): CoordinatorStarter {
  return new CoordinatorStarter(TRANSACTION_STATE_TOPIC, coordinator, () => TransactionStateLog.ensureTopic(controller, {
    numPartitions: config.getInt('transaction.state.log.num.partitions'),
    replicationFactor: config.getInt('transaction.state.log.replication.factor'),
    segmentBytes: config.getInt('transaction.state.log.segment.bytes'),
    minInsyncReplicas: config.getInt('transaction.state.log.min.isr'),
  }), controller, replicas, log, electsPartitions, 'every transactional id');
}
