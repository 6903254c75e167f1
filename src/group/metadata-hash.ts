// The metadata hash of a consumer group (KIP-1101, Kafka 4.1+), as Kafka's Utils.computeTopicHash
// and Utils.computeGroupHash compute it, so that the ConsumerGroupMetadataValue Fjord writes reads
// the same in Kafka: XXH3-64 (hash4j's streaming hash: integers little-endian, a string as its
// UTF-16 code units then its length) over each subscribed topic's id, name and partitions, then
// over the topic hashes in the order of their names.
// Racks: Kafka also hashes the racks of each partition's replicas; Fjord's group coordinator does
// not see broker racks, so its hash is Kafka's for brokers without broker.rack.
import type { TopicRecord } from '../cluster/metadata-store';
import { xxh3 } from '../common/xxh3';

/** Kafka's TOPIC_HASH_MAGIC_BYTE: the version of the topic hash's layout. */
const TOPIC_HASH_MAGIC_BYTE = 0;

/** Kafka's computeTopicHash (signed, as Kafka's long). */
export function topicHash(topic: TopicRecord): bigint {
  const name = Buffer.from(topic.name, 'utf16le');
  const bytes = Buffer.alloc(1 + 16 + name.length + 4 + 4 + 4 * topic.partitions.length);
  let at = bytes.writeUInt8(TOPIC_HASH_MAGIC_BYTE, 0);
  // The UUID's most and least significant halves, each as a long.
  at = bytes.writeBigUInt64LE(BigInt(`0x${topic.id.slice(0, 16)}`), at);
  at = bytes.writeBigUInt64LE(BigInt(`0x${topic.id.slice(16)}`), at);
  at += name.copy(bytes, at);
  at = bytes.writeInt32LE(topic.name.length, at);
  at = bytes.writeInt32LE(topic.partitions.length, at);
  for (let p = 0; p < topic.partitions.length; p++) at = bytes.writeInt32LE(p, at);
  return BigInt.asIntN(64, xxh3(bytes));
}

/** Kafka's computeGroupHash: 0 for no topics, else the hash of the topic hashes sorted by topic name. */
export function groupHash(topicHashes: ReadonlyMap<string, bigint>): bigint {
  if (topicHashes.size === 0) return 0n;
  const names = [...topicHashes.keys()].sort();
  const bytes = Buffer.alloc(8 * names.length);
  names.forEach((name, i) => bytes.writeBigInt64LE(topicHashes.get(name)!, 8 * i));
  return BigInt.asIntN(64, xxh3(bytes));
}
