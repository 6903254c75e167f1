// Control records: the transaction markers (COMMIT or ABORT) that end a transaction in a partition.
import { NO_SEQUENCE } from './batch';
import { buildBatchSync } from './build-batch';
import { decodeRecordsSync } from './decode-records';

export const ControlRecordType = { ABORT: 0, COMMIT: 1 } as const;

/** Key of a control record: int16 version 0, int16 type. */
export function controlRecordKey(type: number): Buffer {
  const k = Buffer.alloc(4);
  k.writeInt16BE(0, 0);
  k.writeInt16BE(type, 2);
  return k;
}

/** Type of a control record key (ControlRecordType), or -1 if the key is not one. */
export function parseControlRecordType(key: Buffer | null): number {
  if (key === null || key.length < 4 || key.readInt16BE(0) < 0) return -1;
  return key.readInt16BE(2);
}

/** The control batch that ends a transaction (EndTransactionMarker: int16 version 0, int32 coordinatorEpoch). */
export function buildEndTxnMarker(o: {
  commit: boolean;
  producerId: number;
  producerEpoch: number;
  coordinatorEpoch: number;
  baseOffset?: number;
  partitionLeaderEpoch?: number;
  timestamp?: number;
}): Buffer {
  const value = Buffer.alloc(6);
  value.writeInt16BE(0, 0);
  value.writeInt32BE(o.coordinatorEpoch, 2);
  return buildBatchSync({
    baseOffset: o.baseOffset,
    partitionLeaderEpoch: o.partitionLeaderEpoch,
    records: [{ key: controlRecordKey(o.commit ? ControlRecordType.COMMIT : ControlRecordType.ABORT), value, timestamp: o.timestamp }],
    producerId: o.producerId,
    producerEpoch: o.producerEpoch,
    baseSequence: NO_SEQUENCE,
    isTransactional: true,
    isControl: true,
  });
}

/**
 * What the transaction marker in a control batch says (its one record: key = ControlRecordType,
 * value = EndTransactionMarker), or null when the batch holds no such record (compaction can leave
 * an empty control batch).
 */
export function readEndTxnMarker(batch: Buffer): { commit: boolean; coordinatorEpoch: number } | null {
  const [record] = decodeRecordsSync(batch);
  const type = record ? parseControlRecordType(record.key) : -1;
  if ((type !== ControlRecordType.ABORT && type !== ControlRecordType.COMMIT) || record.value === null || record.value.length < 6) return null;
  return { commit: type === ControlRecordType.COMMIT, coordinatorEpoch: record.value.readInt32BE(2) };
}
