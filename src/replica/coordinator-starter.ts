// How a coordinator whose state lives in an internal topic (__transaction_state, __share_group_state)
// starts: the topic is created on first use, not at start-up (as Kafka's). A single broker leads every
// partition, so the starter elects them all itself, at once if the topic exists; in cluster mode the
// replica layer elects them as this broker gains their leadership and the starter only creates the topic.
import type { Logger } from 'pino';
import type { Controller, Outcome } from '../cluster/controller';
import type { ReplicaManager } from './replica-manager';

/** What the starter drives of a coordinator. */
export interface ElectedCoordinator {
  onElection(partition: number, leaderEpoch: number): void;
  /** Settles once no partition load is in flight. */
  loadsSettled(): Promise<void>;
  /** The topic was deleted: every partition is dropped and its epochs forgotten. */
  unload(): void;
}

/**
 * Starts the coordinator once: creates the topic unless `onlyIfExists`, then, if `electsPartitions`
 * (a single broker), elects and loads every partition. Never rejects: a failure is logged and the
 * coordinator stays unavailable (a later call tries again, as does the first after the topic is deleted).
 */
export class CoordinatorStarter {
  private starting: Promise<void> | undefined;

  constructor(
    private readonly topicName: string,
    private readonly coordinator: ElectedCoordinator,
    /** Creates the topic with its configs unless it exists. */
    private readonly ensureTopic: () => Promise<Outcome>,
    private readonly controller: Controller,
    private readonly replicas: ReplicaManager,
    private readonly log: Logger,
    private readonly electsPartitions = true,
    /** What deleting the topic loses, for the warning. */
    lost = 'its state',
  ) {
    // Deleting the topic (Kafka allows it) forgets what it held; the next use creates it again.
    controller.onTopicDeleted(topicName, () => {
      log.warn(`${topicName} was deleted: ${lost} is forgotten`);
      coordinator.unload();
      this.starting = undefined;
    });
  }

  start(onlyIfExists = false): Promise<void> {
    if (onlyIfExists && !this.controller.topic(this.topicName)) return Promise.resolve();
    this.starting ??= this.run().catch((err) => {
      this.log.error({ err, topic: this.topicName }, 'a coordinator could not start');
      this.starting = undefined;
    });
    return this.starting;
  }

  /** Settles once no start is in flight. */
  settled(): Promise<void> {
    return this.starting ?? Promise.resolve();
  }

  private async run(): Promise<void> {
    // After a crash the listener opens while the logs load: reading the topic before its partitions
    // are online would load an empty state and lose what it holds.
    await this.replicas.loaded;
    const created = await this.ensureTopic();
    const topic = this.controller.topic(this.topicName);
    if (!topic) throw new Error(`could not create ${this.topicName}: ${created.errorMessage ?? created.errorCode}`);
    if (!this.electsPartitions) return;
    for (const p of topic.partitions) this.coordinator.onElection(p.index, p.leaderEpoch);
    await this.coordinator.loadsSettled();
  }
}
