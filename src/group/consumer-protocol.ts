// The consumer's embedded protocol (protocol type "consumer") as the coordinator reads it:
// - for a classic group, which topics a member subscribes to: like Kafka's
//   ClassicGroup.computeSubscribedTopics, only the version-0 prefix is parsed (version int16, then
//   topics as an int32-counted array of int16-length strings), since every later version starts with it;
// - for a classic member of a consumer group (KIP-848), the whole ConsumerProtocolSubscription
//   (its owned partitions and rack too), and the ConsumerProtocolAssignment bytes it is answered.
import { Reader, Writer } from '../protocol/primitives';

export const CONSUMER_PROTOCOL_TYPE = 'consumer';

/** The subscribed topics, or null when the bytes are not a consumer subscription. */
export function subscribedTopics(metadata: Buffer): string[] | null {
  try {
    const r = new Reader(metadata);
    if (r.int16() < 0) return null;
    const n = r.arrayLength();
    if (n < 0) return null;
    const topics: string[] = [];
    for (let i = 0; i < n; i++) topics.push(r.string());
    return topics;
  } catch {
    return null;
  }
}

/** A ConsumerProtocolSubscription (v0-3) as a classic member of a consumer group sends it. */
export interface ConsumerSubscription {
  version: number;
  topics: string[];
  /** v1+. */
  ownedPartitions: { topic: string; partitions: number[] }[];
  /** v3+. */
  rackId: string | null;
}

/** The whole subscription (Kafka's ConsumerProtocol.deserializeConsumerProtocolSubscription), or null when the bytes are not one. */
export function decodeSubscription(metadata: Buffer): ConsumerSubscription | null {
  try {
    const r = new Reader(metadata);
    const version = r.int16();
    if (version < 0) return null;
    const topics: string[] = [];
    for (let i = 0, n = r.arrayLength(); i < n; i++) topics.push(r.string());
    r.nullableBytes();
    const ownedPartitions: ConsumerSubscription['ownedPartitions'] = [];
    if (version >= 1) {
      for (let i = 0, n = r.arrayLength(); i < n; i++) {
        const topic = r.string();
        const partitions: number[] = [];
        for (let j = 0, m = r.arrayLength(); j < m; j++) partitions.push(r.int32());
        ownedPartitions.push({ topic, partitions });
      }
    }
    if (version >= 2) r.int32(); // generation id
    const rackId = version >= 3 ? r.nullableString() : null;
    return { version, topics, ownedPartitions, rackId };
  } catch {
    return null;
  }
}

/** The highest ConsumerProtocolAssignment version; every version has the same layout. */
const ASSIGNMENT_MAX_VERSION = 3;

/** ConsumerProtocolAssignment bytes (at the member's subscription version, as Kafka answers a classic member). */
export function encodeAssignment(partitions: { topic: string; partitions: number[] }[], version: number): Buffer {
  const w = new Writer(64);
  w.int16(Math.min(Math.max(version, 0), ASSIGNMENT_MAX_VERSION));
  w.arrayLength(partitions.length);
  for (const t of partitions) {
    w.string(t.topic);
    w.arrayLength(t.partitions.length);
    for (const p of t.partitions) w.int32(p);
  }
  w.nullableBytes(null);
  return w.finishOne();
}

/** The partitions of ConsumerProtocolAssignment bytes (any version), or null when they are not one. */
export function decodeAssignment(bytes: Buffer): { topic: string; partitions: number[] }[] | null {
  try {
    const r = new Reader(bytes);
    if (r.int16() < 0) return null;
    const assigned: { topic: string; partitions: number[] }[] = [];
    for (let i = 0, n = r.arrayLength(); i < n; i++) {
      const topic = r.string();
      const partitions: number[] = [];
      for (let j = 0, m = r.arrayLength(); j < m; j++) partitions.push(r.int32());
      assigned.push({ topic, partitions });
    }
    return assigned;
  } catch {
    return null;
  }
}
