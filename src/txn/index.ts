// The transaction coordinator as the broker runs it: its settings from the broker config (Kafka's
// names) and its start-up. As in Kafka, __transaction_state is created on first use (the first
// FindCoordinator for a transactional id), not at start-up; a broker that has it loads it at once,
// so transactions a crash interrupted are finished without waiting for a client. Until loaded,
// FindCoordinator answers COORDINATOR_NOT_AVAILABLE and the transaction APIs
// COORDINATOR_LOAD_IN_PROGRESS or NOT_COORDINATOR, which clients retry.
import type { Logger } from 'pino';
import type { BrokerConfig } from '../config/broker-config';
import type { Controller } from '../cluster/controller';
import type { GroupCoordinator } from '../group';
import type { ReplicaManager } from '../replica/replica-manager';
import { TransactionCoordinator } from './coordinator';
import { LocalTxnMarkerWriter } from './markers';
import type { ProducerIdManager } from './producer-ids';
import { TRANSACTION_STATE_TOPIC, TransactionStateLog } from './transaction-state-log';

export { TransactionCoordinator } from './coordinator';

export function createTransactionCoordinator(config: BrokerConfig, replicas: ReplicaManager, groups: GroupCoordinator,
  producerIds: ProducerIdManager, log: Logger): TransactionCoordinator {
  const txnLog = log.child({ component: 'transaction-coordinator' });
  return new TransactionCoordinator({
    maxTimeoutMs: config.getInt('transaction.max.timeout.ms'),
    transactionalIdExpirationMs: config.getInt('transactional.id.expiration.ms'),
    abortTimedOutIntervalMs: config.getInt('transaction.abort.timed.out.transaction.cleanup.interval.ms'),
    removeExpiredIntervalMs: config.getInt('transaction.remove.expired.transaction.cleanup.interval.ms'),
  }, new LocalTxnMarkerWriter(replicas, groups, txnLog), producerIds, txnLog);
}

/**
 * Starts the coordinator once: creates __transaction_state unless `onlyIfExists`, then loads it.
 * Never rejects: a failure is logged and the coordinator stays unavailable (a later call tries again,
 * as does the first after the topic is deleted).
 */
export class TransactionCoordinatorStarter {
  private starting: Promise<void> | undefined;

  constructor(
    private readonly coordinator: TransactionCoordinator,
    private readonly config: BrokerConfig,
    private readonly controller: Controller,
    private readonly replicas: ReplicaManager,
    private readonly log: Logger,
  ) {
    // Deleting __transaction_state (Kafka allows it) forgets every transactional id; the next
    // FindCoordinator creates the topic again, as the first one did.
    controller.onTopicDeleted(TRANSACTION_STATE_TOPIC, () => {
      log.warn(`${TRANSACTION_STATE_TOPIC} was deleted: every transactional id is forgotten`);
      coordinator.unload();
      this.starting = undefined;
    });
  }

  start(onlyIfExists = false): Promise<void> {
    if (onlyIfExists && !this.controller.topic(TRANSACTION_STATE_TOPIC)) return Promise.resolve();
    this.starting ??= this.run().catch((err) => {
      this.log.error({ err }, 'the transaction coordinator could not start');
      this.starting = undefined;
    });
    return this.starting;
  }

  /** Settles once no start is in flight. */
  settled(): Promise<void> {
    return this.starting ?? Promise.resolve();
  }

  private async run(): Promise<void> {
    // After a crash the listener opens while the logs load: reading __transaction_state before its
    // partitions are online would load an empty state and lose the transactions in flight.
    await this.replicas.loaded;
    const created = await TransactionStateLog.ensureTopic(this.controller, {
      numPartitions: this.config.getInt('transaction.state.log.num.partitions'),
      replicationFactor: this.config.getInt('transaction.state.log.replication.factor'),
      segmentBytes: this.config.getInt('transaction.state.log.segment.bytes'),
      minInsyncReplicas: this.config.getInt('transaction.state.log.min.isr'),
    });
    const topic = this.controller.topic(TRANSACTION_STATE_TOPIC);
    if (!topic) throw new Error(`could not create ${TRANSACTION_STATE_TOPIC}: ${created.errorMessage ?? created.errorCode}`);
    await this.coordinator.load(new TransactionStateLog(this.replicas, this.controller, topic.partitions.length, this.log));
  }
}
