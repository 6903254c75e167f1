/**
 * Reads a whole segment file batch by batch, as recovery does (Kafka's
 * LogSegment.recover): checks that each batch's size fits the file, its magic
 * is 2, its offsets increase and (with validateCrc) its CRC-32C matches, and
 * builds the segment's offset and time indexes and leader epochs from the
 * batches on the way. Stops at the first bad batch and says why; the caller
 * decides what to do with the tail (recovery truncates it).
 *
 * Speed: reads 8 MiB chunks into two buffers, the next chunk while the
 * current one's CRCs are checked, so disk or page-cache reads overlap with
 * the CPU work; a batch larger than a chunk gets a buffer of its own.
 */
import * as fs from 'fs';
import {
  BATCH_HEADER_SIZE,
  BATCH_SIZE_PREFIX,
  MAGIC_V2,
  batchBaseOffset,
  batchCrcMatches,
  batchLastOffsetDelta,
  batchLeaderEpoch,
  batchMagic,
  batchMaxTimestamp,
  batchSize,
} from './batch-header';
import { readFully } from './file-io';
import type { LeaderEpochCache } from './leader-epoch-cache';
import { OffsetIndex } from './offset-index';
import { NO_TIMESTAMP, TimeIndex } from './time-index';

type FileHandle = fs.promises.FileHandle;

/** Bytes read at a time. */
const RECOVERY_CHUNK = 8 * 1024 * 1024;

export interface ScanSettings {
  indexIntervalBytes: number;
  maxIndexEntries: number;
  maxTimeIndexEntries: number;
}

export interface ScanResult {
  /** Bytes of valid batches from the start of the file. */
  validBytes: number;
  fileSize: number;
  /** Why the scan stopped before the end of the file, if it did. */
  problem?: string;
  offsetIndex: OffsetIndex;
  timeIndex: TimeIndex;
  nextOffset: number;
  maxTimestamp: number;
  offsetOfMaxTimestamp: number;
  firstTimestamp?: number;
  bytesSinceLastIndexEntry: number;
}

export async function scanSegment(
  file: FileHandle,
  baseOffset: number,
  settings: ScanSettings,
  validateCrc: boolean,
  epochs?: LeaderEpochCache,
): Promise<ScanResult> {
  const fileSize = (await file.stat()).size;
  const offsetIndex = new OffsetIndex(baseOffset, settings.maxIndexEntries);
  const timeIndex = new TimeIndex(baseOffset, settings.maxTimeIndexEntries);
  const interval = settings.indexIntervalBytes;
  let maxTimestamp = NO_TIMESTAMP;
  let offsetOfMaxTimestamp = baseOffset;
  let firstTimestamp: number | undefined;
  let bytesSinceLastIndexEntry = 0;
  let nextOffset = baseOffset;
  let problem: string | undefined;

  let bufferSize = Math.max(BATCH_HEADER_SIZE, Math.min(RECOVERY_CHUNK, fileSize));
  let current = Buffer.allocUnsafe(bufferSize);
  let spare = fileSize > bufferSize ? Buffer.allocUnsafe(bufferSize) : current;
  let chunkStart = 0; // file position of current[0]; everything before it is valid
  let chunkLength = await readFully(file, current, 0, Math.min(bufferSize, fileSize), 0);

  scanning: while (chunkStart < fileSize) {
    // Framing first (cheap): where the last whole batch of this chunk ends.
    let cut = 0;
    while (cut + BATCH_SIZE_PREFIX <= chunkLength) {
      const size = batchSize(current, cut);
      if (size < BATCH_HEADER_SIZE || cut + size > chunkLength) break;
      cut += size;
    }
    if (cut === 0) {
      const remaining = fileSize - chunkStart;
      if (chunkLength < BATCH_SIZE_PREFIX) {
        problem = `torn batch header (${remaining} bytes left in the file)`;
        break;
      }
      const size = batchSize(current, 0);
      if (size < BATCH_HEADER_SIZE) problem = `invalid batch size ${size}`;
      else if (size > remaining) problem = `torn batch: ${size} bytes claimed, ${remaining} in the file`;
      else {
        // One batch larger than the buffer: grow and read it again.
        bufferSize = size;
        current = Buffer.allocUnsafe(bufferSize);
        spare = Buffer.allocUnsafe(bufferSize);
        chunkLength = await readFully(file, current, 0, Math.min(bufferSize, remaining), chunkStart);
        continue;
      }
      break;
    }

    // Read the next chunk while this one is validated (when there are two buffers).
    const nextStart = chunkStart + cut;
    const next = spare;
    const readNext = (): Promise<number> =>
      nextStart < fileSize ? readFully(file, next, 0, Math.min(next.length, fileSize - nextStart), nextStart) : Promise.resolve(0);
    const nextRead = next !== current ? readNext() : undefined;

    for (let at = 0; at < cut; ) {
      const size = batchSize(current, at);
      const position = chunkStart + at;
      const baseOffset = batchBaseOffset(current, at);
      const delta = batchLastOffsetDelta(current, at);
      if (batchMagic(current, at) !== MAGIC_V2) problem = `magic ${batchMagic(current, at)}`;
      else if (validateCrc && !batchCrcMatches(current, at, size)) problem = 'CRC mismatch';
      else if (baseOffset < nextOffset || delta < 0) problem = `offset ${baseOffset} (+${delta}) where ${nextOffset} or later was expected`;
      else if (!offsetIndex.canAppendOffset(baseOffset + delta)) problem = `offset ${baseOffset + delta} overflows the segment`;
      if (problem !== undefined) {
        problem += ` at position ${position}`;
        await nextRead; // let the read finish before its buffer is dropped
        chunkStart = position;
        break scanning;
      }
      const lastOffset = baseOffset + delta;
      const batchMaxTs = batchMaxTimestamp(current, at);
      if (firstTimestamp === undefined) firstTimestamp = batchMaxTs;
      if (batchMaxTs > maxTimestamp) {
        maxTimestamp = batchMaxTs;
        offsetOfMaxTimestamp = lastOffset;
      }
      if (bytesSinceLastIndexEntry > interval) {
        offsetIndex.append(lastOffset, position);
        timeIndex.maybeAppend(maxTimestamp, offsetOfMaxTimestamp);
        bytesSinceLastIndexEntry = 0;
      }
      bytesSinceLastIndexEntry += size;
      const epoch = batchLeaderEpoch(current, at);
      if (epochs && epoch >= 0 && epoch > (epochs.latestEpoch() ?? -1)) epochs.assign(epoch, baseOffset);
      nextOffset = lastOffset + 1;
      at += size;
    }

    chunkLength = await (nextRead ?? readNext());
    spare = current;
    current = next;
    chunkStart = nextStart;
  }
  // As a closed segment does, end the time index with the largest timestamp.
  timeIndex.maybeAppend(maxTimestamp, offsetOfMaxTimestamp);
  return {
    validBytes: Math.min(chunkStart, fileSize), fileSize, problem, offsetIndex, timeIndex, nextOffset,
    maxTimestamp, offsetOfMaxTimestamp, firstTimestamp, bytesSinceLastIndexEntry,
  };
}
