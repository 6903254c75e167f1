/**
 * The instruments of a broker's state that the layers below record as things happen (a flush, a
 * cleaning, an ISR change, a rebalance), named after Kafka's JMX metrics. Gauges of state that is
 * simply there (partitions, log sizes, groups, lag, transactions) are read when scraped instead:
 * src/ops/state-metrics.ts.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** What storage records: flushes and the log cleaner (Kafka's LogFlushStats, LogCleaner, LogCleanerManager). */
export class LogMetrics {
  /** Kafka's LogFlushRateAndTimeMs: each fsync of a log's segments, in milliseconds as Kafka's timer. */
  readonly flushTimeMs: Histogram;
  /** Of the last cleaning: bytes written over bytes read to recopy, as a percent (Kafka's cleaner-recopy-percent). */
  readonly cleanerRecopyPercent: Gauge;
  /** Of the last cleaning: its duration (Kafka's max-clean-time-secs, one cleaner thread). */
  readonly cleanerMaxCleanTimeSecs: Gauge;
  /** Of the last cleaning: how full its offset map got (Kafka's max-buffer-utilization-percent). */
  readonly cleanerMaxBufferUtilizationPercent: Gauge;
  /** Bytes the cleaner read and wrote: their rate is its throughput. */
  readonly cleanerBytesRead: Counter;
  readonly cleanerBytesWritten: Counter;
  /** The largest dirty ratio among the compacted logs at the cleaner's last look (Kafka's max-dirty-percent). */
  readonly cleanerMaxDirtyPercent: Gauge;

  constructor(registry: Registry) {
    const registers = [registry];
    this.flushTimeMs = new Histogram({
      name: 'kafka_log_logflushstats_logflushrateandtimems', help: 'Time of each log flush (fsync) in milliseconds',
      buckets: [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000], registers,
    });
    this.cleanerRecopyPercent = new Gauge({
      name: 'kafka_log_logcleaner_cleaner_recopy_percent', help: 'Bytes written over bytes read by the last cleaning, in percent', registers,
    });
    this.cleanerMaxCleanTimeSecs = new Gauge({
      name: 'kafka_log_logcleaner_max_clean_time_secs', help: 'Duration of the last cleaning in seconds', registers,
    });
    this.cleanerMaxBufferUtilizationPercent = new Gauge({
      name: 'kafka_log_logcleaner_max_buffer_utilization_percent', help: 'How full the offset map of the last cleaning got, in percent', registers,
    });
    this.cleanerBytesRead = new Counter({ name: 'kafka_log_logcleaner_bytes_read_total', help: 'Bytes read by the log cleaner', registers });
    this.cleanerBytesWritten = new Counter({ name: 'kafka_log_logcleaner_bytes_written_total', help: 'Bytes written by the log cleaner', registers });
    this.cleanerMaxDirtyPercent = new Gauge({
      name: 'kafka_log_logcleanermanager_max_dirty_percent', help: 'Largest dirty ratio of a compacted log at the last cleaner pass, in percent', registers,
    });
  }
}

/** What the replica layer records: the leaders' ISR changes (Kafka's ReplicaManager IsrShrinksPerSec, IsrExpandsPerSec). */
export class ReplicaMetrics {
  readonly isrShrinks: Counter;
  readonly isrExpands: Counter;

  constructor(registry: Registry) {
    const registers = [registry];
    this.isrShrinks = new Counter({ name: 'kafka_server_replicamanager_isrshrinks_total', help: 'ISR shrinks of partitions led here', registers });
    this.isrExpands = new Counter({ name: 'kafka_server_replicamanager_isrexpands_total', help: 'ISR expansions of partitions led here', registers });
  }
}

/** What the group coordinator records: completed rebalances by group type (Kafka's group-completed-rebalance-count). */
export class GroupMetrics {
  readonly completedRebalances: Counter<'type'>;

  constructor(registry: Registry) {
    this.completedRebalances = new Counter({
      name: 'kafka_coordinator_group_groupmetadatamanager_completed_rebalances_total', help: 'Rebalances completed by groups coordinated here',
      labelNames: ['type'], registers: [registry],
    });
  }
}
