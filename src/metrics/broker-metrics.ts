/**
 * What one broker measures of itself, in Prometheus's terms (prom-client).
 *
 * One registry per broker, never prom-client's global one: a test or `fjord cluster` runs several
 * brokers in one process, and each serves only its own figures at its /metrics. The layers that
 * record (net, storage, replica, ...) are handed this object; gauges of state that already exists
 * (partitions, groups, transactions) are read when scraped rather than kept up to date.
 */
import { Registry } from 'prom-client';
import { NetworkMetrics } from './network-metrics';
import { processMetrics } from './process-metrics';
import { ProgressTracker } from './progress';
import { RequestMetrics } from './request-metrics';
import { GroupMetrics, LogMetrics, ReplicaMetrics } from './state-instruments';
import { TopicMetrics } from './topic-metrics';

export class BrokerMetrics {
  readonly registry = new Registry();
  /** Per API: requests, errors, time split and sizes (net records them). */
  readonly requests = new RequestMetrics(this.registry);
  /** Per topic: bytes and messages in and out, produce and fetch requests (replica records them). */
  readonly topics = new TopicMetrics(this.registry);
  /** Per listener: connections and authentications (net records them). */
  readonly network = new NetworkMetrics(this.registry);
  /** The broker's long tasks (recovery, cleanings), for /api/progress. */
  readonly progress = new ProgressTracker();
  /** State recorded as it changes (state-instruments.ts); the rest is read at scrape time by src/ops/state-metrics.ts. */
  readonly log = new LogMetrics(this.registry);
  readonly replica = new ReplicaMetrics(this.registry);
  readonly group = new GroupMetrics(this.registry);

  constructor(readonly nodeId: number) {
    processMetrics();
  }

  /** The Prometheus text exposition of every metric, as served at /metrics: the broker's, then the process's. */
  async render(): Promise<string> {
    const [own, process] = await Promise.all([this.registry.metrics(), processMetrics().metrics()]);
    return `${own}\n${process}`;
  }
}
