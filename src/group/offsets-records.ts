// The records of __consumer_offsets, byte for byte as Kafka writes them, so that Kafka's own tools
// (kafka-dump-log --offsets-decoder, the console consumer's offsets formatter) read a Fjord log, and a
// Fjord broker reads a Kafka one.
//
// Framing (Kafka's CoordinatorRecordSerde):
//   key   = int16 record type (historically "the key version") | key message at version 0
//   value = int16 value version | value message at that version;  null value = tombstone (deletes the key)
//
// The messages are generated from protocol-specs/ (OffsetCommitKey, OffsetCommitValue,
// GroupMetadataKey, GroupMetadataValue); this file adds the framing, the version choice and the
// mapping to the coordinator's types.
//
// Record types (group-coordinator/src/main/resources/common/message/*.json, apiKey of each):
//   0 LegacyOffsetCommitKey {group, topic, partition}  -> value LegacyOffsetCommitValue (= OffsetCommitValue v0)
//   1 OffsetCommitKey       {group, topic, partition}  -> value OffsetCommitValue v0-4
//   2 GroupMetadataKey      {group}                    -> value GroupMetadataValue v0-4
//   3-8, 16 the consumer group records (KIP-848): ./consumer-records.ts;
//   other types (share and streams groups): skipped, as Kafka's loader skips types it does not know
//   (CoordinatorLoader.UnknownRecordTypeException).
// Older Kafka described the same bytes as OffsetCommitKey versions 0-1 and GroupMetadataKey version 2
// (identical schemas): type 0 keys come from brokers of before 0.10 and are still read.
//
// Every version-dependent field is "ignorable": writing an older version silently drops it.
//
// Versions written: offset commits v3, or v1 when the commit carries an expire timestamp (v1 is the
// only version with that field, and it has no leaderEpoch); group metadata v3. That is Kafka's
// GroupCoordinatorRecordHelpers before 4.1 (offsetCommitValueVersion: 1 with an expire timestamp, else
// 3, "the highest supported non-flexible version"; GROUP_METADATA_VALUE_VERSION = 3), and 4.1.1 still
// writes group metadata v3. Kafka 4.1 writes offset commits as v4 to carry the tagged topicId, which
// Fjord does not track; v3 is kept: every Kafka reader since 2.3 understands it, v4 needs 3.5+ (KIP-915).
import { ProtocolError, Reader, Writer, ZERO_UUID } from '../protocol/primitives';
import { decodeGroupMetadataKey, encodeGroupMetadataKey as writeGroupMetadataKey } from '../protocol/generated/GroupMetadataKey';
import {
  decodeGroupMetadataValue as readGroupMetadataValue, encodeGroupMetadataValue as writeGroupMetadataValue,
  GroupMetadataValueVersions,
} from '../protocol/generated/GroupMetadataValue';
import { decodeOffsetCommitKey, encodeOffsetCommitKey as writeOffsetCommitKey } from '../protocol/generated/OffsetCommitKey';
import {
  decodeOffsetCommitValue as readOffsetCommitValue, encodeOffsetCommitValue as writeOffsetCommitValue,
  OffsetCommitValueVersions,
} from '../protocol/generated/OffsetCommitValue';
import type { GroupSnapshot, OffsetAndMetadata } from './store';

export const LEGACY_OFFSET_COMMIT_KEY_TYPE = 0;
export const OFFSET_COMMIT_KEY_TYPE = 1;
export const GROUP_METADATA_KEY_TYPE = 2;

/** OffsetCommitValue version written for a commit without an expire timestamp. */
export const OFFSET_COMMIT_VALUE_VERSION = 3;
/** OffsetCommitValue version written for a commit with an expire timestamp (v1 is the only one that has it). */
export const OFFSET_COMMIT_VALUE_VERSION_WITH_EXPIRE = 1;
export const GROUP_METADATA_VALUE_VERSION = 3;

/** Keys are written at version 0 after their record type. */
const KEY_VERSION = 0;

/** Kafka's version choice (GroupCoordinatorRecordHelpers.offsetCommitValueVersion). */
export function offsetCommitValueVersion(expireTimestamp: number): number {
  return expireTimestamp >= 0 ? OFFSET_COMMIT_VALUE_VERSION_WITH_EXPIRE : OFFSET_COMMIT_VALUE_VERSION;
}

// ---------------------------------------------------------------------------------------------------------
// Keys
// ---------------------------------------------------------------------------------------------------------

export type OffsetsRecordKey =
  | { kind: 'offset'; type: number; group: string; topic: string; partition: number }
  | { kind: 'group'; type: number; group: string }
  /** Another record type (3+: consumer group records, read by ./consumer-records.ts; share and streams groups'). */
  | { kind: 'unknown'; type: number };

export function encodeOffsetCommitKey(group: string, topic: string, partition: number, type = OFFSET_COMMIT_KEY_TYPE): Buffer {
  if (type !== OFFSET_COMMIT_KEY_TYPE && type !== LEGACY_OFFSET_COMMIT_KEY_TYPE) throw new Error(`not an offset commit key type: ${type}`);
  const w = new Writer(16 + group.length + topic.length);
  w.int16(type);
  writeOffsetCommitKey(w, { group, topic, partition }, KEY_VERSION);
  return w.finishOne();
}

export function encodeGroupMetadataKey(group: string): Buffer {
  const w = new Writer(8 + group.length);
  w.int16(GROUP_METADATA_KEY_TYPE);
  writeGroupMetadataKey(w, { group }, KEY_VERSION);
  return w.finishOne();
}

/** Throws ProtocolError when the bytes do not hold a key of a type it knows. Trailing bytes are ignored, as in Kafka. */
export function decodeKey(key: Buffer): OffsetsRecordKey {
  const r = new Reader(key);
  const type = r.int16();
  switch (type) {
    case LEGACY_OFFSET_COMMIT_KEY_TYPE:
    case OFFSET_COMMIT_KEY_TYPE:
      return { kind: 'offset', type, ...decodeOffsetCommitKey(r, KEY_VERSION) };
    case GROUP_METADATA_KEY_TYPE:
      return { kind: 'group', type, group: decodeGroupMetadataKey(r, KEY_VERSION).group };
    default:
      return { kind: 'unknown', type };
  }
}

// ---------------------------------------------------------------------------------------------------------
// OffsetCommitValue
// ---------------------------------------------------------------------------------------------------------

export interface OffsetCommitValue extends OffsetAndMetadata {
  /** Tagged field of v4+ (Kafka 4.1); ZERO_UUID (32 zeros) when absent. */
  topicId?: string;
}

export interface DecodedOffsetCommitValue extends OffsetCommitValue {
  version: number;
  topicId: string;
}

export function encodeOffsetCommitValue(v: OffsetCommitValue, version = offsetCommitValueVersion(v.expireTimestamp)): Buffer {
  checkValueVersion('OffsetCommitValue', version, OffsetCommitValueVersions.max);
  const w = new Writer(40 + v.metadata.length * 3);
  w.int16(version);
  writeOffsetCommitValue(w, {
    offset: BigInt(v.offset), leaderEpoch: v.leaderEpoch, metadata: v.metadata, commitTimestamp: BigInt(v.commitTimestamp),
    expireTimestamp: BigInt(v.expireTimestamp), topicId: v.topicId ?? ZERO_UUID,
  }, version);
  return w.finishOne();
}

export function decodeOffsetCommitValue(value: Buffer): DecodedOffsetCommitValue {
  const r = new Reader(value);
  const version = r.int16();
  checkValueVersion('OffsetCommitValue', version, OffsetCommitValueVersions.max);
  const v = readOffsetCommitValue(r, version);
  return {
    version,
    offset: safeNumber(v.offset, 'offset'),
    leaderEpoch: v.leaderEpoch ?? -1,
    metadata: v.metadata,
    commitTimestamp: safeNumber(v.commitTimestamp, 'commitTimestamp'),
    expireTimestamp: safeNumber(v.expireTimestamp ?? -1n, 'expireTimestamp'),
    topicId: v.topicId ?? ZERO_UUID,
  };
}

// ---------------------------------------------------------------------------------------------------------
// GroupMetadataValue
// ---------------------------------------------------------------------------------------------------------

export interface DecodedGroupMetadataValue extends GroupSnapshot {
  version: number;
}

export function encodeGroupMetadataValue(g: GroupSnapshot, version = GROUP_METADATA_VALUE_VERSION): Buffer {
  checkValueVersion('GroupMetadataValue', version, GroupMetadataValueVersions.max);
  const w = new Writer(256);
  w.int16(version);
  writeGroupMetadataValue(w, {
    protocolType: g.protocolType,
    generation: g.generationId,
    protocol: g.protocolName,
    leader: g.leader,
    currentStateTimestamp: BigInt(g.currentStateTimestamp),
    members: g.members.map((m) => ({
      memberId: m.memberId, groupInstanceId: m.groupInstanceId, clientId: m.clientId, clientHost: m.clientHost,
      rebalanceTimeout: m.rebalanceTimeoutMs, sessionTimeout: m.sessionTimeoutMs, subscription: m.subscription, assignment: m.assignment,
    })),
  }, version);
  return w.finishOne();
}

export function decodeGroupMetadataValue(value: Buffer): DecodedGroupMetadataValue {
  const r = new Reader(value);
  const version = r.int16();
  checkValueVersion('GroupMetadataValue', version, GroupMetadataValueVersions.max);
  const g = readGroupMetadataValue(r, version);
  return {
    version,
    protocolType: g.protocolType,
    generationId: g.generation,
    protocolName: g.protocol,
    leader: g.leader,
    currentStateTimestamp: safeNumber(g.currentStateTimestamp ?? -1n, 'currentStateTimestamp'),
    members: g.members.map((m) => ({
      memberId: m.memberId,
      groupInstanceId: m.groupInstanceId ?? null,
      clientId: m.clientId,
      clientHost: m.clientHost,
      // v0 has no rebalance timeout: Kafka's classic coordinator used the session timeout
      // (GroupMetadataManager.readGroupMessageValue, `if (version == 0) sessionTimeout`).
      rebalanceTimeoutMs: version >= 1 ? m.rebalanceTimeout ?? 0 : m.sessionTimeout,
      sessionTimeoutMs: m.sessionTimeout,
      // Copies: the loaded snapshot must not pin the (large) read buffer the record came from.
      subscription: Buffer.from(m.subscription),
      assignment: Buffer.from(m.assignment),
    })),
  };
}

// ---------------------------------------------------------------------------------------------------------
// helpers
// ---------------------------------------------------------------------------------------------------------

/** A version read from a record (or asked for) that is not the message's: the record is not one this broker reads. */
function checkValueVersion(what: string, version: number, max: number): void {
  if (!Number.isInteger(version) || version < 0 || version > max) {
    throw new ProtocolError(`${what} version ${version} is not in the supported range 0-${max}`);
  }
}

function safeNumber(v: bigint, field: string): number {
  const n = Number(v);
  if (!Number.isSafeInteger(n)) throw new ProtocolError(`${field} ${v} is outside the safe integer range`);
  return n;
}
