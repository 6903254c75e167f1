// The records of __transaction_state, byte for byte as Kafka writes them (TransactionLog in Kafka's
// transaction coordinator), so Kafka's tools read a Fjord log and Fjord reads a Kafka one.
//
// Framing (Kafka's CoordinatorRecordSerde):
//   key   = int16 record type 0 (TRANSACTION_LOG) | TransactionLogKey v0: transactionalId string
//   value = int16 version | TransactionLogValue at that version;  null value = tombstone (the id expired)
//
// TransactionLogValue (versions 0-1, flexible from 1):
//   producerId int64 | producerEpoch int16 | transactionTimeoutMs int32 | transactionStatus int8
//   | transactionPartitions nullable [topic string, partitionIds [int32]] (null when Empty)
//   | transactionLastUpdateTimestampMs int64 | transactionStartTimestampMs int64
//   | v1+: tagged fields: 0 previousProducerId, 1 nextProducerId, 2 clientTransactionVersion, 3 nextProducerEpoch
// Kafka writes v0 unless the transaction.version feature is 2 (TransactionVersion.transactionLogValueVersion);
// Fjord serves transaction version 1, so it writes v0 and reads both.
import { ProtocolError, Reader, Writer } from '../protocol/primitives';
import { TransactionState, type TopicPartition } from './transaction-metadata';

export const TRANSACTION_LOG_KEY_TYPE = 0;
export const TRANSACTION_LOG_VALUE_VERSION = 0;
const MAX_VALUE_VERSION = 1;

/** What one value record holds: the transactional id's state as of its write. */
export interface TransactionLogValue {
  producerId: number;
  producerEpoch: number;
  transactionTimeoutMs: number;
  state: TransactionState;
  partitions: TopicPartition[];
  lastUpdateTimestampMs: number;
  startTimestampMs: number;
}

export function encodeTransactionLogKey(transactionalId: string): Buffer {
  const w = new Writer(8 + transactionalId.length * 3);
  w.int16(TRANSACTION_LOG_KEY_TYPE);
  w.string(transactionalId);
  return w.finishOne();
}

/** The transactional id, or null for a record type this broker does not know (skipped, as Kafka's loader does). */
export function decodeTransactionLogKey(key: Buffer): string | null {
  const r = new Reader(key);
  if (r.int16() !== TRANSACTION_LOG_KEY_TYPE) return null;
  return r.string();
}

export function encodeTransactionLogValue(v: TransactionLogValue): Buffer {
  const byTopic = new Map<string, number[]>();
  for (const p of v.partitions) {
    let list = byTopic.get(p.topic);
    if (!list) byTopic.set(p.topic, (list = []));
    list.push(p.partition);
  }
  const w = new Writer(64 + v.partitions.length * 8);
  w.int16(TRANSACTION_LOG_VALUE_VERSION);
  w.int64(BigInt(v.producerId));
  w.int16(v.producerEpoch);
  w.int32(v.transactionTimeoutMs);
  w.int8(v.state);
  if (v.state === TransactionState.Empty) {
    w.arrayLength(-1);
  } else {
    w.arrayLength(byTopic.size);
    for (const [topic, partitions] of byTopic) {
      w.string(topic);
      w.arrayLength(partitions.length);
      for (const p of partitions) w.int32(p);
    }
  }
  w.int64(BigInt(v.lastUpdateTimestampMs));
  w.int64(BigInt(v.startTimestampMs));
  return w.finishOne();
}

/** Throws ProtocolError for a version it does not know or bytes that are not a value. */
export function decodeTransactionLogValue(value: Buffer): TransactionLogValue {
  const r = new Reader(value);
  const version = r.int16();
  if (version < 0 || version > MAX_VALUE_VERSION) {
    throw new ProtocolError(`TransactionLogValue version ${version} is not in the supported range 0-${MAX_VALUE_VERSION}`);
  }
  const flexible = version >= 1;
  const producerId = Number(r.int64());
  const producerEpoch = r.int16();
  const transactionTimeoutMs = r.int32();
  const status = r.int8();
  if (!(status in TransactionState)) throw new ProtocolError(`unknown transaction status ${status}`);
  const state = status as TransactionState;
  const partitions: TopicPartition[] = [];
  const topics = flexible ? r.compactArrayLength() : r.arrayLength();
  for (let i = 0; i < topics; i++) {
    const topic = flexible ? r.compactString() : r.string();
    const count = flexible ? r.compactArrayLength() : r.arrayLength();
    for (let j = 0; j < count; j++) partitions.push({ topic, partition: r.int32() });
    if (flexible) r.skipTaggedFields();
  }
  const lastUpdateTimestampMs = Number(r.int64());
  const startTimestampMs = Number(r.int64());
  if (flexible) r.skipTaggedFields();
  return {
    producerId, producerEpoch, transactionTimeoutMs, state,
    // Kafka ignores the partitions of an Empty transaction.
    partitions: state === TransactionState.Empty ? [] : partitions,
    lastUpdateTimestampMs, startTimestampMs,
  };
}
