// The records of __consumer_offsets, byte for byte as Kafka writes them, so that Kafka's own tools
// (kafka-dump-log --offsets-decoder, the console consumer's offsets formatter) read a Fjord log, and a
// Fjord broker reads a Kafka one.
//
// Framing (Kafka's CoordinatorRecordSerde):
//   key   = int16 record type (historically "the key version") | key message at version 0
//   value = int16 value version | value message at that version;  null value = tombstone (deletes the key)
//
// Record types (group-coordinator/src/main/resources/common/message/*.json, apiKey of each):
//   0 LegacyOffsetCommitKey {group, topic, partition}  -> value LegacyOffsetCommitValue (= OffsetCommitValue v0)
//   1 OffsetCommitKey       {group, topic, partition}  -> value OffsetCommitValue v0-4
//   2 GroupMetadataKey      {group}                    -> value GroupMetadataValue v0-4
//   3+ the KIP-848 / share / streams group records: not read here (Kafka's loader also skips types it
//      does not know, CoordinatorLoader.UnknownRecordTypeException).
// Older Kafka described the same bytes as OffsetCommitKey versions 0-1 and GroupMetadataKey version 2
// (identical schemas): type 0 keys come from brokers of before 0.10 and are still read.
//
// OffsetCommitValue (versions 0-4, flexible from 4):
//   offset int64 | leaderEpoch int32 (v3+, default -1) | metadata string | commitTimestamp int64
//   | expireTimestamp int64 (v1 only, default -1) | v4+: tagged fields, tag 0 = topicId uuid (Kafka 4.1)
// GroupMetadataValue (versions 0-4, flexible from 4):
//   protocolType string | generation int32 | protocol nullable string | leader nullable string
//   | currentStateTimestamp int64 (v2+, default -1) | members [MemberMetadata] | v4+: tagged fields
//   MemberMetadata: memberId string | groupInstanceId nullable string (v3+) | clientId string
//   | clientHost string | rebalanceTimeout int32 (v1+) | sessionTimeout int32 | subscription bytes
//   | assignment bytes | v4+: tagged fields
// Every version-dependent field is "ignorable": writing an older version silently drops it.
//
// Versions written: offset commits v3, or v1 when the commit carries an expire timestamp (v1 is the
// only version with that field, and it has no leaderEpoch); group metadata v3. That is Kafka's
// GroupCoordinatorRecordHelpers before 4.1 (offsetCommitValueVersion: 1 with an expire timestamp, else
// 3, "the highest supported non-flexible version"; GROUP_METADATA_VALUE_VERSION = 3), and 4.1.1 still
// writes group metadata v3. Kafka 4.1 writes offset commits as v4 to carry the tagged topicId, which
// Fjord does not track; v3 is kept: every Kafka reader since 2.3 understands it, v4 needs 3.5+ (KIP-915).
import { ProtocolError, Reader, Writer, ZERO_UUID } from '../protocol/primitives';
import type { GroupMemberSnapshot, GroupSnapshot, OffsetAndMetadata } from './offsets-log';

export const LEGACY_OFFSET_COMMIT_KEY_TYPE = 0;
export const OFFSET_COMMIT_KEY_TYPE = 1;
export const GROUP_METADATA_KEY_TYPE = 2;

/** OffsetCommitValue version written for a commit without an expire timestamp. */
export const OFFSET_COMMIT_VALUE_VERSION = 3;
/** OffsetCommitValue version written for a commit with an expire timestamp (v1 is the only one that has it). */
export const OFFSET_COMMIT_VALUE_VERSION_WITH_EXPIRE = 1;
export const GROUP_METADATA_VALUE_VERSION = 3;

const MAX_OFFSET_COMMIT_VALUE_VERSION = 4;
const MAX_GROUP_METADATA_VALUE_VERSION = 4;
const FIRST_FLEXIBLE_VERSION = 4;

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
  /** A record type this broker does not read (3+: the new consumer / share / streams group records). */
  | { kind: 'unknown'; type: number };

export function encodeOffsetCommitKey(group: string, topic: string, partition: number, type = OFFSET_COMMIT_KEY_TYPE): Buffer {
  if (type !== OFFSET_COMMIT_KEY_TYPE && type !== LEGACY_OFFSET_COMMIT_KEY_TYPE) throw new Error(`not an offset commit key type: ${type}`);
  const w = new Writer(16 + group.length + topic.length);
  w.int16(type);
  w.string(group);
  w.string(topic);
  w.int32(partition);
  return w.finishOne();
}

export function encodeGroupMetadataKey(group: string): Buffer {
  const w = new Writer(8 + group.length);
  w.int16(GROUP_METADATA_KEY_TYPE);
  w.string(group);
  return w.finishOne();
}

/** Throws ProtocolError when the bytes do not hold a key of a type it knows. Trailing bytes are ignored, as in Kafka. */
export function decodeKey(key: Buffer): OffsetsRecordKey {
  const r = new Reader(key);
  const type = r.int16();
  switch (type) {
    case LEGACY_OFFSET_COMMIT_KEY_TYPE:
    case OFFSET_COMMIT_KEY_TYPE: {
      const group = r.string();
      const topic = r.string();
      const partition = r.int32();
      return { kind: 'offset', type, group, topic, partition };
    }
    case GROUP_METADATA_KEY_TYPE:
      return { kind: 'group', type, group: r.string() };
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

function checkVersion(what: string, version: number, max: number): void {
  if (!Number.isInteger(version) || version < 0 || version > max) {
    throw new ProtocolError(`${what} version ${version} is not in the supported range 0-${max}`);
  }
}

export function encodeOffsetCommitValue(v: OffsetCommitValue, version = offsetCommitValueVersion(v.expireTimestamp)): Buffer {
  checkVersion('OffsetCommitValue', version, MAX_OFFSET_COMMIT_VALUE_VERSION);
  const flexible = version >= FIRST_FLEXIBLE_VERSION;
  const w = new Writer(40 + v.metadata.length * 3);
  w.int16(version);
  w.int64(BigInt(v.offset));
  if (version >= 3) w.int32(v.leaderEpoch);
  if (flexible) w.compactString(v.metadata);
  else w.string(v.metadata);
  w.int64(BigInt(v.commitTimestamp));
  if (version === 1) w.int64(BigInt(v.expireTimestamp));
  if (flexible) {
    const topicId = v.topicId ?? ZERO_UUID;
    if (topicId !== ZERO_UUID) {
      w.unsignedVarint(1); // one tagged field
      w.unsignedVarint(0); // tag 0: topicId
      w.unsignedVarint(16);
      w.uuid(topicId);
    } else {
      w.unsignedVarint(0);
    }
  }
  return w.finishOne();
}

export function decodeOffsetCommitValue(value: Buffer): DecodedOffsetCommitValue {
  const r = new Reader(value);
  const version = r.int16();
  checkVersion('OffsetCommitValue', version, MAX_OFFSET_COMMIT_VALUE_VERSION);
  const flexible = version >= FIRST_FLEXIBLE_VERSION;
  const offset = safeNumber(r.int64(), 'offset');
  const leaderEpoch = version >= 3 ? r.int32() : -1;
  const metadata = flexible ? r.compactString() : r.string();
  const commitTimestamp = safeNumber(r.int64(), 'commitTimestamp');
  const expireTimestamp = version === 1 ? safeNumber(r.int64(), 'expireTimestamp') : -1;
  let topicId = ZERO_UUID;
  if (flexible) {
    readTaggedFields(r, (tag, size) => {
      if (tag !== 0) return false;
      if (size !== 16) throw new ProtocolError(`OffsetCommitValue topicId tag has size ${size}, expected 16`);
      topicId = r.uuid();
      return true;
    });
  }
  return { version, offset, leaderEpoch, metadata, commitTimestamp, expireTimestamp, topicId };
}

// ---------------------------------------------------------------------------------------------------------
// GroupMetadataValue
// ---------------------------------------------------------------------------------------------------------

export interface DecodedGroupMetadataValue extends GroupSnapshot {
  version: number;
}

export function encodeGroupMetadataValue(g: GroupSnapshot, version = GROUP_METADATA_VALUE_VERSION): Buffer {
  checkVersion('GroupMetadataValue', version, MAX_GROUP_METADATA_VALUE_VERSION);
  const flex = version >= FIRST_FLEXIBLE_VERSION;
  const w = new Writer(256);
  const str = (s: string) => (flex ? w.compactString(s) : w.string(s));
  const nstr = (s: string | null) => (flex ? w.compactNullableString(s) : w.nullableString(s));
  const bytes = (b: Buffer) => (flex ? w.compactBytes(b) : w.bytes(b));
  w.int16(version);
  str(g.protocolType);
  w.int32(g.generationId);
  nstr(g.protocolName);
  nstr(g.leader);
  if (version >= 2) w.int64(BigInt(g.currentStateTimestamp));
  if (flex) w.compactArrayLength(g.members.length);
  else w.arrayLength(g.members.length);
  for (const m of g.members) {
    str(m.memberId);
    if (version >= 3) nstr(m.groupInstanceId);
    str(m.clientId);
    str(m.clientHost);
    if (version >= 1) w.int32(m.rebalanceTimeoutMs);
    w.int32(m.sessionTimeoutMs);
    bytes(m.subscription);
    bytes(m.assignment);
    if (flex) w.unsignedVarint(0);
  }
  if (flex) w.unsignedVarint(0);
  return w.finishOne();
}

export function decodeGroupMetadataValue(value: Buffer): DecodedGroupMetadataValue {
  const r = new Reader(value);
  const version = r.int16();
  checkVersion('GroupMetadataValue', version, MAX_GROUP_METADATA_VALUE_VERSION);
  const flex = version >= FIRST_FLEXIBLE_VERSION;
  const str = () => (flex ? r.compactString() : r.string());
  const nstr = () => (flex ? r.compactNullableString() : r.nullableString());
  // Copies: the loaded snapshot must not pin the (large) read buffer the record came from.
  const bytes = () => Buffer.from(flex ? r.compactBytes() : r.bytes());
  const protocolType = str();
  const generationId = r.int32();
  const protocolName = nstr();
  const leader = nstr();
  const currentStateTimestamp = version >= 2 ? safeNumber(r.int64(), 'currentStateTimestamp') : -1;
  const count = flex ? r.compactArrayLength() : r.arrayLength();
  if (count < 0) throw new ProtocolError('GroupMetadataValue members is not nullable');
  const members: GroupMemberSnapshot[] = [];
  for (let i = 0; i < count; i++) {
    const memberId = str();
    const groupInstanceId = version >= 3 ? nstr() : null;
    const clientId = str();
    const clientHost = str();
    const rebalanceTimeout = version >= 1 ? r.int32() : null;
    const sessionTimeoutMs = r.int32();
    const subscription = bytes();
    const assignment = bytes();
    if (flex) readTaggedFields(r, () => false);
    members.push({
      memberId, groupInstanceId, clientId, clientHost,
      // v0 has no rebalance timeout: Kafka's classic coordinator used the session timeout
      // (GroupMetadataManager.readGroupMessageValue, `if (version == 0) sessionTimeout`).
      rebalanceTimeoutMs: rebalanceTimeout ?? sessionTimeoutMs,
      sessionTimeoutMs, subscription, assignment,
    });
  }
  if (flex) readTaggedFields(r, () => false);
  return { version, protocolType, generationId, protocolName, leader, currentStateTimestamp, members };
}

// ---------------------------------------------------------------------------------------------------------
// helpers
// ---------------------------------------------------------------------------------------------------------

/** A tagged-field section; `known` reads a field it knows (returning true) or declines (it is skipped). */
function readTaggedFields(r: Reader, known: (tag: number, size: number) => boolean): void {
  const count = r.unsignedVarint();
  for (let i = 0; i < count; i++) {
    const tag = r.unsignedVarint();
    const size = r.unsignedVarint();
    const end = r.beginTaggedField(size);
    if (known(tag, size)) r.endTaggedField(end, tag);
    else r.skip(size);
  }
}

function safeNumber(v: bigint, field: string): number {
  const n = Number(v);
  if (!Number.isSafeInteger(n)) throw new ProtocolError(`${field} ${v} is outside the safe integer range`);
  return n;
}
