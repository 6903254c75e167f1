// The records of __transaction_state, byte for byte as Kafka writes them (TransactionLog in Kafka's
// transaction coordinator), so Kafka's tools read a Fjord log and Fjord reads a Kafka one.
//
// Framing (Kafka's CoordinatorRecordSerde):
//   key   = int16 record type 0 (TRANSACTION_LOG) | TransactionLogKey v0: transactionalId string
//   value = int16 version | TransactionLogValue at that version;  null value = tombstone (the id expired)
//
// The key and value messages are generated from protocol-specs/ (TransactionLogKey,
// TransactionLogValue); this file adds the framing and the mapping to the coordinator's types.
//
// The value version follows the transaction.version feature, as Kafka's TransactionVersion
// .transactionLogValueVersion: v1 (flexible, with the tagged PreviousProducerId, NextProducerId and
// ClientTransactionVersion) while it is 2 or more, else v0, which has none of them. Both are read.
import { ProtocolError, Reader, Writer } from '../protocol/primitives';
import { decodeTransactionLogKey as readKey, encodeTransactionLogKey as writeKey } from '../protocol/generated/TransactionLogKey';
import {
  decodeTransactionLogValue as readValue, encodeTransactionLogValue as writeValue, TransactionLogValueVersions,
} from '../protocol/generated/TransactionLogValue';
import { TransactionState, type TopicPartition } from './transaction-metadata';

export const TRANSACTION_LOG_KEY_TYPE = 0;
const KEY_VERSION = 0;

/** The value version Kafka writes at a finalized transaction.version level. */
export const transactionLogValueVersion = (transactionVersion: number): number => (transactionVersion >= 2 ? 1 : 0);

/** What one value record holds: the transactional id's state as of its write. */
export interface TransactionLogValue {
  producerId: number;
  /** v1: the producer id before this write's transition (-1 in v0). */
  previousProducerId: number;
  /** v1: the id a transaction version 2 end moves to once complete (-1: none). */
  nextProducerId: number;
  producerEpoch: number;
  transactionTimeoutMs: number;
  state: TransactionState;
  partitions: TopicPartition[];
  lastUpdateTimestampMs: number;
  startTimestampMs: number;
  /** v1: the client's transaction version (0 in v0). */
  clientTransactionVersion: number;
}

export function encodeTransactionLogKey(transactionalId: string): Buffer {
  const w = new Writer(8 + transactionalId.length * 3);
  w.int16(TRANSACTION_LOG_KEY_TYPE);
  writeKey(w, { transactionalId }, KEY_VERSION);
  return w.finishOne();
}

/** The transactional id, or null for a record type this broker does not know (skipped, as Kafka's loader does). */
export function decodeTransactionLogKey(key: Buffer): string | null {
  const r = new Reader(key);
  if (r.int16() !== TRANSACTION_LOG_KEY_TYPE) return null;
  return readKey(r, KEY_VERSION).transactionalId;
}

export function encodeTransactionLogValue(v: TransactionLogValue, version: number): Buffer {
  const byTopic = new Map<string, number[]>();
  for (const p of v.partitions) {
    let list = byTopic.get(p.topic);
    if (!list) byTopic.set(p.topic, (list = []));
    list.push(p.partition);
  }
  const w = new Writer(64 + v.partitions.length * 8);
  w.int16(version);
  // As Kafka: NextProducerEpoch is never written.
  const flexibleFields = version >= 1 ? {
    previousProducerId: BigInt(v.previousProducerId), nextProducerId: BigInt(v.nextProducerId),
    clientTransactionVersion: v.clientTransactionVersion,
  } : {};
  writeValue(w, {
    ...flexibleFields,
    producerId: BigInt(v.producerId),
    producerEpoch: v.producerEpoch,
    transactionTimeoutMs: v.transactionTimeoutMs,
    transactionStatus: v.state,
    transactionPartitions: v.state === TransactionState.Empty
      ? null
      : [...byTopic].map(([topic, partitionIds]) => ({ topic, partitionIds })),
    transactionLastUpdateTimestampMs: BigInt(v.lastUpdateTimestampMs),
    transactionStartTimestampMs: BigInt(v.startTimestampMs),
  }, version);
  return w.finishOne();
}

/** Throws ProtocolError for a version it does not know or bytes that are not a value. */
export function decodeTransactionLogValue(value: Buffer): TransactionLogValue {
  const r = new Reader(value);
  const version = r.int16();
  const max = TransactionLogValueVersions.max;
  if (version < 0 || version > max) {
    throw new ProtocolError(`TransactionLogValue version ${version} is not in the supported range 0-${max}`);
  }
  const v = readValue(r, version);
  if (!(v.transactionStatus in TransactionState)) throw new ProtocolError(`unknown transaction status ${v.transactionStatus}`);
  const state = v.transactionStatus as TransactionState;
  return {
    producerId: Number(v.producerId),
    previousProducerId: Number(v.previousProducerId ?? -1n),
    nextProducerId: Number(v.nextProducerId ?? -1n),
    producerEpoch: v.producerEpoch,
    transactionTimeoutMs: v.transactionTimeoutMs,
    state,
    // Kafka ignores the partitions of an Empty transaction.
    partitions: state === TransactionState.Empty
      ? []
      : (v.transactionPartitions ?? []).flatMap((t) => t.partitionIds.map((partition) => ({ topic: t.topic, partition }))),
    lastUpdateTimestampMs: Number(v.transactionLastUpdateTimestampMs),
    startTimestampMs: Number(v.transactionStartTimestampMs),
    clientTransactionVersion: v.clientTransactionVersion ?? 0,
  };
}
