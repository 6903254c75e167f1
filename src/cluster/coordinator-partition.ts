// Which partition of an internal topic a coordinator key lives on: a group id on __consumer_offsets,
// a transactional id on __transaction_state. Kafka: Utils.abs(key.hashCode()) % partitions, with
// Java's String.hashCode and Utils.abs (which maps Integer.MIN_VALUE to 0). That is NOT the
// `& 0x7fffffff` of the producer's partitioner: the two differ for every negative hash ("my-group"
// hashes to -1906497762, partition 12 of 50 here, 36 with the mask).

/** Java's String.hashCode: s[0]*31^(n-1) + ... + s[n-1] over UTF-16 code units, in int32 arithmetic. */
export function javaStringHashCode(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(31, h) + s.charCodeAt(i)) | 0;
  return h;
}

/** Kafka's Utils.abs: Math.abs, except Integer.MIN_VALUE -> 0. */
function kafkaAbs(n: number): number {
  return n === -2147483648 ? 0 : Math.abs(n);
}

export function coordinatorPartitionFor(key: string, numPartitions: number): number {
  return kafkaAbs(javaStringHashCode(key)) % numPartitions;
}
