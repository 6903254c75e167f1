// The metadata hash of a consumer group (KIP-1101, Kafka 4.1+), as Kafka's Utils.computeTopicHash
// and Utils.computeGroupHash compute it, so that the ConsumerGroupMetadataValue Fjord writes reads
// the same in Kafka: XXH3-64 (hash4j's streaming hash: integers little-endian, a string as its
// UTF-16 code units then its length) over each subscribed topic's id, name, partition count and,
// per partition, the sorted racks of its replicas' brokers; then over the topic hashes in the
// order of their names.
import type { TopicRecord } from '../cluster/metadata-store';
import { xxh3 } from '@node-rs/xxhash';

/** Kafka's TOPIC_HASH_MAGIC_BYTE: the version of the topic hash's layout. */
const TOPIC_HASH_MAGIC_BYTE = 0;

/** A broker's rack; null (or unknown broker): none. */
export type RackOf = (nodeId: number) => string | null | undefined;

/** Each partition's replicas' racks, sorted as Java sorts strings (by UTF-16 code unit). */
export function partitionRacks(topic: TopicRecord, rackOf: RackOf): string[][] {
  return topic.partitions.map((p) => p.replicas.flatMap((r) => rackOf(r) ?? []).sort());
}

/** Kafka's computeTopicHash (signed, as Kafka's long), over `racks` from partitionRacks. */
export function topicHash(topic: TopicRecord, racks: readonly (readonly string[])[]): bigint {
  const parts: Buffer[] = [];
  const int = (v: number): void => {
    const b = Buffer.alloc(4);
    b.writeInt32LE(v);
    parts.push(b);
  };
  const string = (s: string): void => {
    parts.push(Buffer.from(s, 'utf16le'));
    int(s.length);
  };
  const head = Buffer.alloc(17);
  head.writeUInt8(TOPIC_HASH_MAGIC_BYTE, 0);
  // The UUID's most and least significant halves, each as a long.
  head.writeBigUInt64LE(BigInt(`0x${topic.id.slice(0, 16)}`), 1);
  head.writeBigUInt64LE(BigInt(`0x${topic.id.slice(16)}`), 9);
  parts.push(head);
  string(topic.name);
  int(topic.partitions.length);
  racks.forEach((partitionRacks, p) => {
    int(p);
    for (const rack of partitionRacks) {
      // Each rack's length first, so that no two rack lists hash alike.
      int(rack.length);
      string(rack);
    }
  });
  return BigInt.asIntN(64, xxh3.xxh64(Buffer.concat(parts)));
}

/** Kafka's computeGroupHash: 0 for no topics, else the hash of the topic hashes sorted by topic name. */
export function groupHash(topicHashes: ReadonlyMap<string, bigint>): bigint {
  if (topicHashes.size === 0) return 0n;
  const names = [...topicHashes.keys()].sort();
  const bytes = Buffer.alloc(8 * names.length);
  names.forEach((name, i) => bytes.writeBigInt64LE(topicHashes.get(name)!, 8 * i));
  return BigInt.asIntN(64, xxh3.xxh64(bytes));
}
