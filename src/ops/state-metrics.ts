/**
 * Gauges of a broker's state, read when Prometheus scrapes (prom-client's collect()): nothing is
 * kept up to date on the request path for them. Named after Kafka's JMX metrics:
 *
 *   kafka_server_replicamanager_partitioncount, _leadercount, _underreplicatedpartitions (led here,
 *     ISR smaller than the assigned replicas), _offlinereplicacount (logs gone offline here)
 *   kafka_controller_kafkacontroller_activecontrollercount, _offlinepartitionscount (partitions
 *     without a leader: reported by the active controller only, as Kafka does, 0 elsewhere)
 *   kafka_log_log_size, _numlogsegments, _logstartoffset, _logendoffset {topic, partition}: the
 *     partitions hosted here only, so the series are bounded by what the broker holds
 *   kafka_coordinator_group_groupmetadatamanager_numgroups {state, type}: the groups coordinated here
 *   kafka_consumer_group_lag {group, topic}: high watermark minus committed offset, summed over the
 *     partitions of the topic whose high watermark this broker knows (it hosts them)
 *   kafka_coordinator_transaction_transactionstatemanager_numtransactions {state}
 *
 * The counters and histograms recorded as things happen are in src/metrics/state-instruments.ts.
 */
import { Gauge, type Registry } from 'prom-client';
import type { Controller } from '../cluster/controller';
import type { GroupCoordinator } from '../group';
import type { Partition } from '../replica/partition';
import type { ReplicaManager } from '../replica/replica-manager';
import type { PartitionLog } from '../storage';
import type { TransactionCoordinator } from '../txn';

/** The parts of a broker the gauges read (the Broker itself). */
export interface BrokerState {
  readonly nodeId: number;
  readonly controller: Pick<Controller, 'controllerId' | 'topic' | 'topics'>;
  readonly replicas: Pick<ReplicaManager, 'allPartitions'>;
  readonly groups: Pick<GroupCoordinator, 'listGroups' | 'fetchOffsets'>;
  readonly transactions: Pick<TransactionCoordinator, 'list'>;
}

/** The gauges of `broker`'s state, on its own registry. */
export function registerStateMetrics(registry: Registry, broker: BrokerState): void {
  const registers = [registry];
  const gauge = (name: string, help: string, read: () => number) =>
    new Gauge({ name, help, registers, collect() { this.set(read()); } });

  gauge('kafka_server_replicamanager_partitioncount', 'Partitions hosted here', () => [...broker.replicas.allPartitions()].length);
  gauge('kafka_server_replicamanager_leadercount', 'Partitions led here', () => leaders(broker).length);
  gauge('kafka_server_replicamanager_underreplicatedpartitions', 'Partitions led here whose ISR is smaller than their replicas',
    () => leaders(broker).filter((p) => p.isr.length < p.replicas.length).length);
  gauge('kafka_server_replicamanager_offlinereplicacount', 'Partitions hosted here whose log is offline',
    () => [...broker.replicas.allPartitions()].filter((p) => p.log.offline).length);
  const isController = () => broker.controller.controllerId === broker.nodeId;
  gauge('kafka_controller_kafkacontroller_activecontrollercount', 'Whether this broker is the active controller', () => (isController() ? 1 : 0));
  gauge('kafka_controller_kafkacontroller_offlinepartitionscount', 'Partitions without a leader (on the active controller)',
    () => (isController() ? broker.controller.topics().reduce((n, t) => n + t.partitions.filter((p) => p.leader < 0).length, 0) : 0));

  const perPartition = (name: string, help: string, read: (log: PartitionLog) => number) => new Gauge({
    name, help, labelNames: ['topic', 'partition'], registers,
    collect() {
      this.reset();
      for (const p of broker.replicas.allPartitions()) this.set({ topic: p.topic, partition: String(p.index) }, read(p.log));
    },
  });
  perPartition('kafka_log_log_size', 'Bytes of the partition log on disk', (log) => log.size);
  perPartition('kafka_log_log_numlogsegments', 'Segments of the partition log', (log) => log.segmentList().length);
  perPartition('kafka_log_log_logstartoffset', 'First offset of the partition log', (log) => log.logStartOffset);
  perPartition('kafka_log_log_logendoffset', 'Next offset of the partition log', (log) => log.logEndOffset);

  new Gauge({
    name: 'kafka_coordinator_group_groupmetadatamanager_numgroups', help: 'Groups coordinated here, by state and type',
    labelNames: ['state', 'type'], registers,
    collect() {
      this.reset();
      const counts = new Map<string, { state: string; type: string; n: number }>();
      for (const g of listedGroups(broker)) {
        const k = `${g.type}/${g.state}`;
        const c = counts.get(k) ?? { state: g.state, type: g.type, n: 0 };
        c.n++;
        counts.set(k, c);
      }
      for (const { state, type, n } of counts.values()) this.set({ state, type }, n);
    },
  });

  new Gauge({
    name: 'kafka_consumer_group_lag', help: 'Messages between the committed offset and the high watermark, by group and topic (partitions hosted here)',
    labelNames: ['group', 'topic'], registers,
    collect() {
      this.reset();
      for (const [labels, lag] of groupLag(broker)) this.set(labels, lag);
    },
  });

  new Gauge({
    name: 'kafka_coordinator_transaction_transactionstatemanager_numtransactions', help: 'Transactional ids coordinated here, by state',
    labelNames: ['state'], registers,
    collect() {
      this.reset();
      const listed = broker.transactions.list([], [], -1);
      const counts = new Map<string, number>();
      for (const t of listed.transactions) counts.set(t.state, (counts.get(t.state) ?? 0) + 1);
      for (const [state, n] of counts) this.set({ state }, n);
    },
  });
}

/** The partitions led here (every one on a single broker), with their assigned replicas and ISR. */
function leaders(broker: BrokerState): { replicas: readonly number[]; isr: readonly number[] }[] {
  const out: { replicas: readonly number[]; isr: readonly number[] }[] = [];
  for (const p of broker.replicas.allPartitions()) {
    if (p.role?.kind === 'follower') continue;
    const assigned = broker.controller.topic(p.topic)?.partitions[p.index];
    if (!assigned) continue;
    out.push({ replicas: assigned.replicas, isr: p.role?.replicas.isr ?? assigned.isr });
  }
  return out;
}

/** The groups coordinated here; none while the coordinator loads (a scrape then skips them). */
function listedGroups(broker: BrokerState): { groupId: string; state: string; type: string }[] {
  return broker.groups.listGroups([], []).groups;
}

/** Lag by group and topic, over the committed partitions whose high watermark is known here. */
function groupLag(broker: BrokerState): Array<[{ group: string; topic: string }, number]> {
  const hosted = new Map<string, Partition>();
  for (const p of broker.replicas.allPartitions()) hosted.set(`${p.topic}:${p.index}`, p);
  const out: Array<[{ group: string; topic: string }, number]> = [];
  for (const groupId of new Set(listedGroups(broker).map((g) => g.groupId))) {
    const fetched = broker.groups.fetchOffsets(groupId, null, false);
    for (const topic of fetched.topics) {
      let lag = 0;
      let known = false;
      for (const p of topic.partitions) {
        const partition = hosted.get(`${topic.name}:${p.partition}`);
        if (!partition || p.offset < 0) continue;
        known = true;
        lag += Math.max(0, partition.log.highWatermark - p.offset);
      }
      if (known) out.push([{ group: groupId, topic: topic.name }, lag]);
    }
  }
  return out;
}
