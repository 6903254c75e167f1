// The part of the consumer's embedded protocol (ConsumerProtocolSubscription, protocol type
// "consumer") that the coordinator reads: which topics a member subscribes to. Like Kafka's
// ClassicGroup.computeSubscribedTopics, only the version-0 prefix is parsed (version int16, then
// topics as an int32-counted array of int16-length strings), since every later version starts
// with it. Anything else in the bytes (user data, owned partitions, generation, rack) is ignored.
import { Reader } from '../protocol/primitives';

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
