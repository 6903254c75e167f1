// The chaos run's verdict: what the producers were told (their acks) against what the replicas hold
// on disk. Reads each replica's partition directory (the `.log` segment files, batch by batch, as
// Kafka's DumpLogSegments does) and checks, below the high watermark: the replicas' batches are
// byte-identical, the partition leader epoch never goes down with the offset (no two leaders wrote in
// one epoch), every acknowledged record sits at the offset its ack gave, no (producer, seq) appears
// twice and each producer's seqs keep their order within a partition.
import * as fs from 'fs';
import * as path from 'path';
import { decodeRecordsSync, walkBatches } from '../../src/records';

/** One acknowledged record, as a producer wrote it to its acks file. */
export interface Ack {
  partition: number;
  offset: number;
  producer: string;
  seq: number;
}

/** One batch of a replica's log. */
export interface LogBatch {
  baseOffset: number;
  /** Offset after the batch's last record. */
  nextOffset: number;
  leaderEpoch: number;
  bytes: Buffer;
}

export interface PartitionReplicas {
  partition: number;
  highWatermark: number;
  /** Each replica's batches, by broker id. */
  replicas: Map<number, LogBatch[]>;
}

export interface Verdict {
  recordsInLogs: number;
  lost: number;
  /** Acked records found, but at another offset than their ack said. */
  misplaced: number;
  duplicated: number;
  outOfOrder: number;
  epochRegressions: number;
  replicaMismatches: number;
  /** One line per violation (the first few of each kind), for the report. */
  problems: string[];
}

const MAX_PROBLEMS_PER_KIND = 5;

/** The value a producer gives its record number `seq`: `producer:seq`. */
export function recordValue(producer: string, seq: number): string {
  return `${producer}:${seq}`;
}

/** Every complete batch of a partition directory's segment files, in offset order. */
export function readReplicaLog(partitionDir: string): LogBatch[] {
  const segments = fs.readdirSync(partitionDir).filter((f) => f.endsWith('.log')).sort();
  const batches: LogBatch[] = [];
  for (const segment of segments) {
    const buf = fs.readFileSync(path.join(partitionDir, segment));
    // A live log may end in a batch still being written: walkBatches stops before it.
    for (const b of walkBatches(buf).batches) {
      batches.push({
        baseOffset: b.baseOffset,
        nextOffset: b.baseOffset + b.lastOffsetDelta + 1,
        leaderEpoch: b.partitionLeaderEpoch,
        bytes: buf.subarray(b.position, b.position + b.size),
      });
    }
  }
  return batches;
}

export function verify(partitions: PartitionReplicas[], acks: Ack[]): Verdict {
  const v: Verdict = {
    recordsInLogs: 0, lost: 0, misplaced: 0, duplicated: 0, outOfOrder: 0, epochRegressions: 0, replicaMismatches: 0, problems: [],
  };
  const counts = new Map<string, number>();
  const problem = (kind: keyof Verdict, text: string) => {
    const n = (counts.get(kind) ?? 0) + 1;
    counts.set(kind, n);
    if (n <= MAX_PROBLEMS_PER_KIND) v.problems.push(`${kind}: ${text}`);
  };

  // Where each record value was found: `producer:seq` -> "partition/offset" list.
  const found = new Map<string, string[]>();
  const valueAt = new Map<string, string>();
  for (const p of partitions) {
    const reference = compareReplicas(p, problem, v);
    const lastSeq = new Map<string, number>();
    for (const batch of reference) {
      for (const record of decodeRecordsSync(batch.bytes)) {
        if (record.offset >= p.highWatermark) break;
        v.recordsInLogs++;
        const value = record.value?.toString() ?? '';
        const where = `${p.partition}/${record.offset}`;
        valueAt.set(where, value);
        const places = found.get(value) ?? [];
        places.push(where);
        found.set(value, places);
        if (places.length > 1) {
          v.duplicated++;
          problem('duplicated', `${value} at ${places.join(', ')}`);
        }
        const [producer, seqText] = value.split(':');
        const seq = Number(seqText);
        const last = lastSeq.get(producer) ?? -1;
        if (seq <= last) {
          v.outOfOrder++;
          problem('outOfOrder', `${value} at ${where} after seq ${last} of ${producer}`);
        }
        lastSeq.set(producer, Math.max(last, seq));
      }
    }
  }

  for (const ack of acks) {
    const value = recordValue(ack.producer, ack.seq);
    const where = `${ack.partition}/${ack.offset}`;
    if (valueAt.get(where) === value) continue;
    const places = found.get(value);
    if (places) {
      v.misplaced++;
      problem('misplaced', `${value} acked at ${where}, found at ${places.join(', ')} (${where} holds ${valueAt.get(where) ?? 'nothing'})`);
    } else {
      v.lost++;
      problem('lost', `${value} acked at ${where}, in no log below the high watermark`);
    }
  }
  return v;
}

/**
 * Checks the replicas of one partition against each other below its high watermark and the leader
 * epochs of each; returns the batches of the first replica, the reference for the record checks.
 */
function compareReplicas(
  p: PartitionReplicas,
  problem: (kind: keyof Verdict, text: string) => void,
  v: Verdict,
): LogBatch[] {
  const belowHw = (batches: LogBatch[]) => batches.filter((b) => b.baseOffset < p.highWatermark);
  const ids = [...p.replicas.keys()].sort((a, b) => a - b);
  const reference = belowHw(p.replicas.get(ids[0]) ?? []);
  const referenceBytes = Buffer.concat(reference.map((b) => b.bytes));
  for (const id of ids) {
    const batches = belowHw(p.replicas.get(id)!);
    for (let i = 1; i < batches.length; i++) {
      if (batches[i].leaderEpoch < batches[i - 1].leaderEpoch) {
        v.epochRegressions++;
        problem('epochRegressions', `partition ${p.partition} on broker ${id}: epoch ${batches[i].leaderEpoch} at offset ${batches[i].baseOffset} after epoch ${batches[i - 1].leaderEpoch} at ${batches[i - 1].baseOffset}`);
      }
    }
    const end = batches.length === 0 ? 0 : batches[batches.length - 1].nextOffset;
    if (end < p.highWatermark) {
      v.replicaMismatches++;
      problem('replicaMismatches', `partition ${p.partition} on broker ${id} ends at ${end}, below the high watermark ${p.highWatermark}`);
    } else if (id !== ids[0] && !Buffer.concat(batches.map((b) => b.bytes)).equals(referenceBytes)) {
      v.replicaMismatches++;
      const diverge = batches.findIndex((b, i) => !reference[i] || !b.bytes.equals(reference[i].bytes));
      problem('replicaMismatches', `partition ${p.partition}: broker ${id} differs from broker ${ids[0]} from the batch at offset ${batches[diverge]?.baseOffset ?? reference[batches.length]?.baseOffset}`);
    }
  }
  return reference;
}
