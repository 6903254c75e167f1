// The records of __share_group_state, byte for byte as Kafka's share coordinator writes them
// (ShareCoordinatorRecordHelpers / ShareCoordinatorRecordSerde), so Kafka's tools read a Fjord log and
// Fjord reads a Kafka one.
//
// Framing (Kafka's CoordinatorRecordSerde):
//   key   = int16 record type | key message v0: groupId, topicId, partition
//           type 0 (ShareSnapshot): a share-partition's whole state; type 1 (ShareUpdate): a change over it
//   value = int16 version 0 | ShareSnapshotValue or ShareUpdateValue;  null value = tombstone (state deleted)
import { ProtocolError, Reader, Writer } from '../protocol/primitives';
import { decodeShareSnapshotKey, encodeShareSnapshotKey } from '../protocol/generated/ShareSnapshotKey';
import { decodeShareSnapshotValue, encodeShareSnapshotValue } from '../protocol/generated/ShareSnapshotValue';
import { decodeShareUpdateKey, encodeShareUpdateKey } from '../protocol/generated/ShareUpdateKey';
import { decodeShareUpdateValue, encodeShareUpdateValue } from '../protocol/generated/ShareUpdateValue';
import type { SharePartitionKey, StateBatch } from './persister';

export const SHARE_SNAPSHOT_RECORD_TYPE = 0;
export const SHARE_UPDATE_RECORD_TYPE = 1;
const KEY_VERSION = 0;
const VALUE_VERSION = 0;

/** A share-partition's state as a snapshot holds it (Kafka's ShareGroupOffset). */
export interface ShareSnapshot {
  snapshotEpoch: number;
  stateEpoch: number;
  leaderEpoch: number;
  startOffset: bigint;
  deliveryCompleteCount: number;
  createTimestamp: number;
  writeTimestamp: number;
  stateBatches: StateBatch[];
}

/** A change over the last snapshot (no state epoch: updates keep the snapshot's). */
export type ShareUpdate = Pick<ShareSnapshot, 'snapshotEpoch' | 'leaderEpoch' | 'startOffset' | 'deliveryCompleteCount' | 'stateBatches'>;

export type ShareStateRecord =
  | { type: 'snapshot'; key: SharePartitionKey; value: ShareSnapshot | null }
  | { type: 'update'; key: SharePartitionKey; value: ShareUpdate | null };

export function encodeShareStateRecord(r: ShareStateRecord): { key: Buffer; value: Buffer | null } {
  const k = { groupId: r.key.groupId, topicId: r.key.topicId, partition: r.key.partition };
  const key = new Writer(32 + k.groupId.length * 3);
  key.int16(r.type === 'snapshot' ? SHARE_SNAPSHOT_RECORD_TYPE : SHARE_UPDATE_RECORD_TYPE);
  if (r.type === 'snapshot') encodeShareSnapshotKey(key, k, KEY_VERSION);
  else encodeShareUpdateKey(key, k, KEY_VERSION);
  if (r.value === null) return { key: key.finishOne(), value: null };
  const value = new Writer(64 + r.value.stateBatches.length * 20);
  value.int16(VALUE_VERSION);
  const common = {
    snapshotEpoch: r.value.snapshotEpoch, leaderEpoch: r.value.leaderEpoch, startOffset: r.value.startOffset,
    deliveryCompleteCount: r.value.deliveryCompleteCount, stateBatches: r.value.stateBatches.map((b) => ({ ...b })),
  };
  if (r.type === 'snapshot') {
    const v = r.value as ShareSnapshot;
    encodeShareSnapshotValue(value, {
      ...common, stateEpoch: v.stateEpoch, createTimestamp: BigInt(v.createTimestamp), writeTimestamp: BigInt(v.writeTimestamp),
    }, VALUE_VERSION);
  } else {
    encodeShareUpdateValue(value, common, VALUE_VERSION);
  }
  return { key: key.finishOne(), value: value.finishOne() };
}

/**
 * The record, or null for a record type this broker does not know (skipped, as Kafka's loader does).
 * Throws ProtocolError for bytes that are not a record of a known type.
 */
export function decodeShareStateRecord(keyBytes: Buffer, valueBytes: Buffer | null): ShareStateRecord | null {
  const r = new Reader(keyBytes);
  const type = r.int16();
  if (type !== SHARE_SNAPSHOT_RECORD_TYPE && type !== SHARE_UPDATE_RECORD_TYPE) return null;
  const k = type === SHARE_SNAPSHOT_RECORD_TYPE ? decodeShareSnapshotKey(r, KEY_VERSION) : decodeShareUpdateKey(r, KEY_VERSION);
  const key: SharePartitionKey = { groupId: k.groupId, topicId: k.topicId, partition: k.partition };
  if (valueBytes === null) return type === SHARE_SNAPSHOT_RECORD_TYPE ? { type: 'snapshot', key, value: null } : { type: 'update', key, value: null };
  const v = new Reader(valueBytes);
  const version = v.int16();
  if (version !== VALUE_VERSION) throw new ProtocolError(`share state value version ${version} is not in the supported range 0-0`);
  if (type === SHARE_SNAPSHOT_RECORD_TYPE) {
    const s = decodeShareSnapshotValue(v, version);
    return {
      type: 'snapshot', key,
      value: {
        snapshotEpoch: s.snapshotEpoch, stateEpoch: s.stateEpoch, leaderEpoch: s.leaderEpoch, startOffset: s.startOffset,
        deliveryCompleteCount: s.deliveryCompleteCount ?? -1, createTimestamp: Number(s.createTimestamp),
        writeTimestamp: Number(s.writeTimestamp), stateBatches: s.stateBatches.map(toStateBatch),
      },
    };
  }
  const u = decodeShareUpdateValue(v, version);
  return {
    type: 'update', key,
    value: {
      snapshotEpoch: u.snapshotEpoch, leaderEpoch: u.leaderEpoch, startOffset: u.startOffset,
      deliveryCompleteCount: u.deliveryCompleteCount ?? -1, stateBatches: u.stateBatches.map(toStateBatch),
    },
  };
}

function toStateBatch(b: { firstOffset: bigint; lastOffset: bigint; deliveryState: number; deliveryCount: number }): StateBatch {
  return { firstOffset: b.firstOffset, lastOffset: b.lastOffset, deliveryState: b.deliveryState, deliveryCount: b.deliveryCount };
}
