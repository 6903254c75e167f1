// The consumer group records of __consumer_offsets (KIP-848), byte for byte as Kafka 4.4 writes
// them, in the framing of ./offsets-records.ts (key = int16 record type | key message v0; value =
// int16 version | value message; null value = tombstone). The messages are generated from
// protocol-specs/ConsumerGroup*.json.
//
// Record types (Kafka's apiKey of each):
//   3  ConsumerGroupMetadata               {group}            -> the group epoch (and the metadata hash, tagged)
//   4  ConsumerGroupPartitionMetadata      {group}            -> replaced by the metadata hash in 4.1: read and skipped
//   5  ConsumerGroupMemberMetadata         {group, member}    -> the member's subscription and client
//   6  ConsumerGroupTargetAssignmentMetadata {group}          -> the target assignment epoch
//   7  ConsumerGroupTargetAssignmentMember {group, member}    -> the member's target assignment
//   8  ConsumerGroupCurrentMemberAssignment {group, member}   -> its epochs, state and current assignment
//   16 ConsumerGroupRegularExpression      {group, regex}     -> the topics the regex matched
import { ProtocolError, Reader, Writer } from '../protocol/primitives';
import { encodeConsumerGroupCurrentMemberAssignmentKey, decodeConsumerGroupCurrentMemberAssignmentKey } from '../protocol/generated/ConsumerGroupCurrentMemberAssignmentKey';
import { encodeConsumerGroupCurrentMemberAssignmentValue, decodeConsumerGroupCurrentMemberAssignmentValue } from '../protocol/generated/ConsumerGroupCurrentMemberAssignmentValue';
import type { ConsumerGroupCurrentMemberAssignmentValueTopicPartitions as EpochedWire } from '../protocol/generated/ConsumerGroupCurrentMemberAssignmentValue';
import { encodeConsumerGroupMemberMetadataKey, decodeConsumerGroupMemberMetadataKey } from '../protocol/generated/ConsumerGroupMemberMetadataKey';
import { encodeConsumerGroupMemberMetadataValue, decodeConsumerGroupMemberMetadataValue } from '../protocol/generated/ConsumerGroupMemberMetadataValue';
import { encodeConsumerGroupMetadataKey, decodeConsumerGroupMetadataKey } from '../protocol/generated/ConsumerGroupMetadataKey';
import { encodeConsumerGroupMetadataValue, decodeConsumerGroupMetadataValue } from '../protocol/generated/ConsumerGroupMetadataValue';
import { encodeConsumerGroupRegularExpressionKey, decodeConsumerGroupRegularExpressionKey } from '../protocol/generated/ConsumerGroupRegularExpressionKey';
import { encodeConsumerGroupRegularExpressionValue, decodeConsumerGroupRegularExpressionValue } from '../protocol/generated/ConsumerGroupRegularExpressionValue';
import { encodeConsumerGroupTargetAssignmentMemberKey, decodeConsumerGroupTargetAssignmentMemberKey } from '../protocol/generated/ConsumerGroupTargetAssignmentMemberKey';
import { encodeConsumerGroupTargetAssignmentMemberValue, decodeConsumerGroupTargetAssignmentMemberValue } from '../protocol/generated/ConsumerGroupTargetAssignmentMemberValue';
import { encodeConsumerGroupTargetAssignmentMetadataKey, decodeConsumerGroupTargetAssignmentMetadataKey } from '../protocol/generated/ConsumerGroupTargetAssignmentMetadataKey';
import { encodeConsumerGroupTargetAssignmentMetadataValue, decodeConsumerGroupTargetAssignmentMetadataValue } from '../protocol/generated/ConsumerGroupTargetAssignmentMetadataValue';
import { MemberState, type ClassicMemberMetadata, type EpochedPartitions, type TopicPartitions } from './consumer-member';

export const CONSUMER_GROUP_METADATA_KEY_TYPE = 3;
export const CONSUMER_GROUP_PARTITION_METADATA_KEY_TYPE = 4;
export const CONSUMER_GROUP_MEMBER_METADATA_KEY_TYPE = 5;
export const CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_KEY_TYPE = 6;
export const CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY_TYPE = 7;
export const CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY_TYPE = 8;
export const CONSUMER_GROUP_REGULAR_EXPRESSION_KEY_TYPE = 16;

/** Kafka's MemberState values, as the current assignment record carries them. */
const MEMBER_STATE_CODES: Record<MemberState, number> = {
  [MemberState.Stable]: 0, [MemberState.UnrevokedPartitions]: 1, [MemberState.UnreleasedPartitions]: 2,
};

const KEY_VERSION = 0;
const VALUE_VERSION = 0;

/** What a member record (type 5) keeps: the member as it asked to be. */
export interface MemberSubscription {
  instanceId: string | null;
  rackId: string | null;
  clientId: string;
  clientHost: string;
  subscribedTopicNames: string[];
  /** '' when none. */
  subscribedTopicRegex: string;
  rebalanceTimeoutMs: number;
  serverAssignor: string | null;
  /** A member of the classic protocol's session timeout and protocols. */
  classic: ClassicMemberMetadata | null;
}

export interface CurrentAssignment {
  memberEpoch: number;
  previousMemberEpoch: number;
  state: MemberState;
  assigned: EpochedPartitions;
  pendingRevocation: EpochedPartitions;
}

/** One consumer group record; a null value is the key's tombstone. */
export type ConsumerGroupRecord =
  | { kind: 'groupEpoch'; groupId: string; value: { epoch: number; metadataHash: bigint } | null }
  | { kind: 'member'; groupId: string; memberId: string; value: MemberSubscription | null }
  | { kind: 'targetEpoch'; groupId: string; value: { assignmentEpoch: number; assignmentTimestamp: number } | null }
  | { kind: 'targetMember'; groupId: string; memberId: string; value: TopicPartitions | null }
  | { kind: 'currentAssignment'; groupId: string; memberId: string; value: CurrentAssignment | null }
  | { kind: 'regex'; groupId: string; regex: string; value: { topics: string[]; version: number; timestamp: number } | null };

function frame(type: number, write: (w: Writer) => void): Buffer {
  const w = new Writer(64);
  w.int16(type);
  write(w);
  return w.finishOne();
}

function value(write: (w: Writer) => void): Buffer {
  return frame(VALUE_VERSION, write);
}

const topicPartitionsToWire = (partitions: TopicPartitions) =>
  [...partitions].map(([topicId, ps]) => ({ topicId, partitions: [...ps].sort((a, b) => a - b) }));

function epochedToWire(partitions: EpochedPartitions): EpochedWire[] {
  return [...partitions].map(([topicId, ps]) => {
    const sorted = [...ps].sort(([a], [b]) => a - b);
    return { topicId, partitions: sorted.map(([p]) => p), assignmentEpochs: sorted.map(([, e]) => e) };
  });
}

/** Partitions without assignment epochs (written before Kafka 4.4) count as assigned at `memberEpoch`. */
function epochedFromWire(wire: EpochedWire[], memberEpoch: number): EpochedPartitions {
  return new Map(wire.map((t) => [t.topicId, new Map(t.partitions.map((p, i) => [p, t.assignmentEpochs?.[i] ?? memberEpoch]))]));
}

export function encodeConsumerGroupRecord(r: ConsumerGroupRecord): { key: Buffer; value: Buffer | null } {
  switch (r.kind) {
    case 'groupEpoch':
      return {
        key: frame(CONSUMER_GROUP_METADATA_KEY_TYPE, (w) => encodeConsumerGroupMetadataKey(w, { groupId: r.groupId }, KEY_VERSION)),
        value: r.value && value((w) => encodeConsumerGroupMetadataValue(w, { epoch: r.value!.epoch, metadataHash: r.value!.metadataHash }, VALUE_VERSION)),
      };
    case 'member': {
      const v = r.value;
      return {
        key: frame(CONSUMER_GROUP_MEMBER_METADATA_KEY_TYPE, (w) => encodeConsumerGroupMemberMetadataKey(w, { groupId: r.groupId, memberId: r.memberId }, KEY_VERSION)),
        value: v && value((w) => encodeConsumerGroupMemberMetadataValue(w, {
          instanceId: v.instanceId, rackId: v.rackId, clientId: v.clientId, clientHost: v.clientHost,
          subscribedTopicNames: v.subscribedTopicNames, subscribedTopicRegex: v.subscribedTopicRegex === '' ? null : v.subscribedTopicRegex,
          rebalanceTimeoutMs: v.rebalanceTimeoutMs, serverAssignor: v.serverAssignor,
          classicMemberMetadata: v.classic && { sessionTimeoutMs: v.classic.sessionTimeoutMs, supportedProtocols: [...v.classic.protocols] },
        }, VALUE_VERSION)),
      };
    }
    case 'targetEpoch':
      return {
        key: frame(CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_KEY_TYPE, (w) => encodeConsumerGroupTargetAssignmentMetadataKey(w, { groupId: r.groupId }, KEY_VERSION)),
        value: r.value && value((w) => encodeConsumerGroupTargetAssignmentMetadataValue(w, {
          assignmentEpoch: r.value!.assignmentEpoch, assignmentTimestamp: BigInt(r.value!.assignmentTimestamp),
        }, VALUE_VERSION)),
      };
    case 'targetMember':
      return {
        key: frame(CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY_TYPE, (w) => encodeConsumerGroupTargetAssignmentMemberKey(w, { groupId: r.groupId, memberId: r.memberId }, KEY_VERSION)),
        value: r.value && value((w) => encodeConsumerGroupTargetAssignmentMemberValue(w, { topicPartitions: topicPartitionsToWire(r.value!) }, VALUE_VERSION)),
      };
    case 'currentAssignment': {
      const v = r.value;
      return {
        key: frame(CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY_TYPE, (w) => encodeConsumerGroupCurrentMemberAssignmentKey(w, { groupId: r.groupId, memberId: r.memberId }, KEY_VERSION)),
        value: v && value((w) => encodeConsumerGroupCurrentMemberAssignmentValue(w, {
          memberEpoch: v.memberEpoch, previousMemberEpoch: v.previousMemberEpoch, state: MEMBER_STATE_CODES[v.state],
          assignedPartitions: epochedToWire(v.assigned), partitionsPendingRevocation: epochedToWire(v.pendingRevocation),
        }, VALUE_VERSION)),
      };
    }
    case 'regex':
      return {
        key: frame(CONSUMER_GROUP_REGULAR_EXPRESSION_KEY_TYPE, (w) => encodeConsumerGroupRegularExpressionKey(w, { groupId: r.groupId, regularExpression: r.regex }, KEY_VERSION)),
        value: r.value && value((w) => encodeConsumerGroupRegularExpressionValue(w, {
          topics: r.value!.topics, version: BigInt(r.value!.version), timestamp: BigInt(r.value!.timestamp),
        }, VALUE_VERSION)),
      };
  }
}

/**
 * The consumer group record of the key and value, null for a record type that is not one (or the
 * partition metadata Kafka 4.1 stopped using). Throws ProtocolError on bytes it cannot read.
 */
export function decodeConsumerGroupRecord(key: Buffer, valueBytes: Buffer | null): ConsumerGroupRecord | null {
  const k = new Reader(key);
  const type = k.int16();
  const v = valueBytes === null ? null : new Reader(valueBytes);
  if (v !== null) {
    const version = v.int16();
    if (version !== VALUE_VERSION && type !== CONSUMER_GROUP_PARTITION_METADATA_KEY_TYPE) {
      throw new ProtocolError(`consumer group record type ${type}: value version ${version} is not in the supported range 0-0`);
    }
  }
  switch (type) {
    case CONSUMER_GROUP_METADATA_KEY_TYPE: {
      const { groupId } = decodeConsumerGroupMetadataKey(k, KEY_VERSION);
      const m = v && decodeConsumerGroupMetadataValue(v, VALUE_VERSION);
      return { kind: 'groupEpoch', groupId, value: m && { epoch: m.epoch, metadataHash: m.metadataHash ?? 0n } };
    }
    case CONSUMER_GROUP_MEMBER_METADATA_KEY_TYPE: {
      const { groupId, memberId } = decodeConsumerGroupMemberMetadataKey(k, KEY_VERSION);
      const m = v && decodeConsumerGroupMemberMetadataValue(v, VALUE_VERSION);
      return {
        kind: 'member', groupId, memberId, value: m && {
          instanceId: m.instanceId, rackId: m.rackId, clientId: m.clientId, clientHost: m.clientHost,
          subscribedTopicNames: m.subscribedTopicNames, subscribedTopicRegex: m.subscribedTopicRegex ?? '',
          rebalanceTimeoutMs: m.rebalanceTimeoutMs ?? -1, serverAssignor: m.serverAssignor,
          classic: m.classicMemberMetadata ? {
            sessionTimeoutMs: m.classicMemberMetadata.sessionTimeoutMs,
            protocols: m.classicMemberMetadata.supportedProtocols.map((p) => ({ name: p.name, metadata: Buffer.from(p.metadata) })),
          } : null,
        },
      };
    }
    case CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_KEY_TYPE: {
      const { groupId } = decodeConsumerGroupTargetAssignmentMetadataKey(k, KEY_VERSION);
      const m = v && decodeConsumerGroupTargetAssignmentMetadataValue(v, VALUE_VERSION);
      return { kind: 'targetEpoch', groupId, value: m && { assignmentEpoch: m.assignmentEpoch, assignmentTimestamp: Number(m.assignmentTimestamp ?? 0n) } };
    }
    case CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY_TYPE: {
      const { groupId, memberId } = decodeConsumerGroupTargetAssignmentMemberKey(k, KEY_VERSION);
      const m = v && decodeConsumerGroupTargetAssignmentMemberValue(v, VALUE_VERSION);
      return { kind: 'targetMember', groupId, memberId, value: m && new Map(m.topicPartitions.map((t) => [t.topicId, new Set(t.partitions)])) };
    }
    case CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY_TYPE: {
      const { groupId, memberId } = decodeConsumerGroupCurrentMemberAssignmentKey(k, KEY_VERSION);
      const m = v && decodeConsumerGroupCurrentMemberAssignmentValue(v, VALUE_VERSION);
      if (m === null) return { kind: 'currentAssignment', groupId, memberId, value: null };
      const state = (Object.keys(MEMBER_STATE_CODES) as MemberState[]).find((s) => MEMBER_STATE_CODES[s] === m.state);
      return {
        kind: 'currentAssignment', groupId, memberId, value: {
          memberEpoch: m.memberEpoch, previousMemberEpoch: m.previousMemberEpoch,
          // An unknown state (a later Kafka's): reconciled again from scratch, as Kafka's UNKNOWN.
          state: state ?? MemberState.UnreleasedPartitions,
          assigned: epochedFromWire(m.assignedPartitions, m.memberEpoch),
          pendingRevocation: epochedFromWire(m.partitionsPendingRevocation, m.memberEpoch),
        },
      };
    }
    case CONSUMER_GROUP_REGULAR_EXPRESSION_KEY_TYPE: {
      const { groupId, regularExpression } = decodeConsumerGroupRegularExpressionKey(k, KEY_VERSION);
      const m = v && decodeConsumerGroupRegularExpressionValue(v, VALUE_VERSION);
      return { kind: 'regex', groupId, regex: regularExpression, value: m && { topics: m.topics, version: Number(m.version), timestamp: Number(m.timestamp) } };
    }
    default:
      return null;
  }
}
