// Shared helpers for the storage tests: valid v2 batches, small configs, temp dirs, a silent logger.
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import pino from 'pino';
import { resolveTopicConfig, type TopicLogConfig } from '../../src/config/topic-config';
import { PartitionLog } from '../../src/storage/partition-log';

// The crc-32 package, independent of storage's own CRC, so the tests check it too.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const CRC32C: { buf(b: Uint8Array): number } = require('crc-32/crc32c');

export const silentLogger = pino({ level: 'silent' });

export interface BatchSpec {
  /** Records in the batch (lastOffsetDelta = records - 1). Default 1. */
  records?: number;
  /** Bytes of record payload after the header. Default 20. */
  payload?: number;
  /** maxTimestamp (baseTimestamp = the same). Default 1_000. */
  timestamp?: number;
  /** partitionLeaderEpoch. Default -1 (none). */
  epoch?: number;
  /** Stored baseOffset before the log stamps it. Default 0. */
  baseOffset?: number;
  /** Byte used to fill the payload. Default 0x61. */
  fill?: number;
}

/** A v2 record batch with a valid header and CRC; the body is filler (storage never decodes records). */
export function makeBatch(spec: BatchSpec = {}): Buffer {
  const records = spec.records ?? 1;
  const payload = spec.payload ?? 20;
  const timestamp = spec.timestamp ?? 1_000;
  const b = Buffer.alloc(61 + payload, spec.fill ?? 0x61);
  b.writeBigInt64BE(BigInt(spec.baseOffset ?? 0), 0);
  b.writeInt32BE(b.length - 12, 8);
  b.writeInt32BE(spec.epoch ?? -1, 12);
  b.writeInt8(2, 16);
  b.writeInt16BE(0, 21); // attributes
  b.writeInt32BE(records - 1, 23);
  b.writeBigInt64BE(BigInt(timestamp), 27);
  b.writeBigInt64BE(BigInt(timestamp), 35);
  b.writeBigInt64BE(-1n, 43); // producerId
  b.writeInt16BE(-1, 51);
  b.writeInt32BE(-1, 53);
  b.writeInt32BE(records, 57);
  b.writeUInt32BE(CRC32C.buf(b.subarray(21)) >>> 0, 17);
  return b;
}

/** Several batches back to back in one buffer (one produce request's worth). */
export function concatBatches(...specs: BatchSpec[]): Buffer {
  return Buffer.concat(specs.map(makeBatch));
}

export function baseOffsetOf(batch: Buffer, at = 0): number {
  return Number(batch.readBigInt64BE(at));
}

/** Base offsets of the batches in a buffer of whole batches. */
export function batchBaseOffsets(buf: Buffer): number[] {
  const out: number[] = [];
  for (let at = 0; at < buf.length; at += buf.readInt32BE(at + 8) + 12) out.push(baseOffsetOf(buf, at));
  return out;
}

/** A resolved topic config with Kafka-named overrides (small segments for tests). */
export function topicConfig(overrides: Record<string, string> = {}): TopicLogConfig {
  return resolveTopicConfig(undefined, overrides);
}

export function tempDirs(prefix: string): { next: () => string } {
  let root: string | undefined;
  let n = 0;
  before(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  });
  after(() => {
    if (root) fs.rmSync(root, { recursive: true, force: true });
  });
  return {
    next: () => path.join(root!, `d${n++}`),
  };
}

/**
 * A suite's partition logs ('t'-0, producer state loaded, segments of `segmentBytes`), each in a
 * fresh directory, closed after each test.
 */
export function partitionLogs(prefix: string, segmentBytes: number): { open: () => Promise<PartitionLog> } {
  const dirs = tempDirs(prefix);
  const opened: PartitionLog[] = [];
  afterEach(async () => {
    for (const log of opened.splice(0)) await log.close();
  });
  return {
    open: async () => {
      const log = await PartitionLog.open({ dir: dirs.next(), topic: 't', partition: 0, config: topicConfig({ 'segment.bytes': String(segmentBytes) }), logger: silentLogger });
      await log.loadProducerState();
      opened.push(log);
      return log;
    },
  };
}

export function segmentFiles(dir: string, suffix: string): string[] {
  return fs.readdirSync(dir).filter((f) => f.endsWith(suffix)).sort();
}
