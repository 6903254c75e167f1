// The partitions of an internal topic a coordinator leads (__transaction_state, __share_group_state),
// as Kafka's onElection/onResignation keep them: an election or resignation older than the partition's
// last leader epoch is stale; electing the epoch already hosted does nothing; a partition loads in the
// background, and a load whose partition was resigned or elected again meanwhile is dropped.
import type { Logger } from 'pino';

export interface HostedCoordinatorPartition {
  readonly index: number;
  readonly leaderEpoch: number;
  loading: boolean;
}

/** What the coordinator does with a partition it gains. */
export interface CoordinatorPartitionLoader<E extends HostedCoordinatorPartition, R> {
  /** A new, still loading, entry. */
  create(index: number, leaderEpoch: number): E;
  /** Reads the partition's state back. */
  read(index: number): Promise<R>;
  /** Applies what was read to the entry, still hosted; sets `loading` to false once served. */
  apply(entry: E, read: R): void;
}

export class CoordinatorPartitions<E extends HostedCoordinatorPartition, R> {
  private readonly hosted = new Map<number, E>();
  /** The highest leader epoch seen per partition: an election or resignation older than it is stale. */
  private readonly epochs = new Map<number, number>();
  /** Partition loads in flight: awaited by settled(). */
  private readonly loads = new Set<Promise<void>>();

  constructor(
    private readonly topicName: string,
    /** Who resigns, for the log: 'transaction coordinator', 'share coordinator'. */
    private readonly role: string,
    private readonly loader: CoordinatorPartitionLoader<E, R>,
    private readonly log?: Logger,
  ) {}

  get(index: number): E | undefined {
    return this.hosted.get(index);
  }

  values(): IterableIterator<E> {
    return this.hosted.values();
  }

  /** Whether the partition is hosted and loaded. */
  isLoaded(index: number): boolean {
    const entry = this.hosted.get(index);
    return entry !== undefined && !entry.loading;
  }

  /** Whether the entry is still the partition's (not resigned, nor elected again since). */
  isCurrent(entry: E): boolean {
    return this.hosted.get(entry.index) === entry;
  }

  /** Hosts the partition at this epoch and starts loading it; false if stale or already hosted at it. */
  elect(index: number, leaderEpoch: number): boolean {
    if (!this.acceptEpoch(index, leaderEpoch)) return false;
    if (this.hosted.get(index)?.leaderEpoch === leaderEpoch) return false;
    const entry = this.loader.create(index, leaderEpoch);
    this.hosted.set(index, entry);
    const load = this.load(entry).finally(() => this.loads.delete(load));
    this.loads.add(load);
    return true;
  }

  /** Drops the partition, unless the resignation is stale. */
  resign(index: number, leaderEpoch: number): void {
    if (!this.acceptEpoch(index, leaderEpoch)) return;
    if (this.hosted.delete(index)) this.log?.info({ partition: index, leaderEpoch }, `resigned as ${this.role} of a partition`);
  }

  /** The topic was deleted: every partition is dropped and its epochs forgotten (a topic created again starts its own). */
  clear(): void {
    this.hosted.clear();
    this.epochs.clear();
  }

  /** Settles once no partition load is in flight. */
  async settled(): Promise<void> {
    while (this.loads.size > 0) await Promise.allSettled([...this.loads]);
  }

  /** Records the epoch as the last seen for the partition, unless it is older than that one (then false). */
  private acceptEpoch(index: number, leaderEpoch: number): boolean {
    const last = this.epochs.get(index);
    if (last !== undefined && leaderEpoch < last) {
      this.log?.info({ partition: index, leaderEpoch, last }, `ignoring a stale election or resignation of a ${this.topicName} partition`);
      return false;
    }
    this.epochs.set(index, leaderEpoch);
    return true;
  }

  private async load(entry: E): Promise<void> {
    let read: R;
    try {
      read = await this.loader.read(entry.index);
    } catch (err) {
      this.log?.error({ err, partition: entry.index }, `loading a ${this.topicName} partition failed`);
      if (this.isCurrent(entry)) this.hosted.delete(entry.index);
      return;
    }
    if (this.isCurrent(entry)) this.loader.apply(entry, read);
  }
}
