import { expect } from 'chai';
import {
  decodeTransactionLogKey, decodeTransactionLogValue, encodeTransactionLogKey, encodeTransactionLogValue, transactionLogValueVersion,
} from '../../src/txn/transaction-log-records';
import { TransactionState } from '../../src/txn/transaction-metadata';

const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ''), 'hex');

describe('txn/transaction-log-records', () => {
  it('writes the key as Kafka does: record type 0, then the transactional id', () => {
    expect(encodeTransactionLogKey('t')).to.deep.equal(hex('0000 0001 74'));
    expect(decodeTransactionLogKey(hex('0000 0001 74'))).to.equal('t');
    expect(decodeTransactionLogKey(hex('0001 0001 74'))).to.equal(null);
  });

  it('writes value version 0 (transaction.version below 2), with the partitions grouped by topic and no version 1 fields', () => {
    const value = {
      producerId: 5, previousProducerId: 4, nextProducerId: -1, producerEpoch: 1, transactionTimeoutMs: 60_000,
      state: TransactionState.Ongoing, partitions: [{ topic: 'out', partition: 0 }, { topic: 'out', partition: 1 }],
      lastUpdateTimestampMs: 100, startTimestampMs: 90, clientTransactionVersion: 2,
    };
    const bytes = hex(`0000 0000000000000005 0001 0000ea60 01
      00000001 0003 6f7574 00000002 00000000 00000001
      0000000000000064 000000000000005a`);
    expect(encodeTransactionLogValue(value, transactionLogValueVersion(1))).to.deep.equal(bytes);
    expect(decodeTransactionLogValue(bytes)).to.deep.equal({ ...value, previousProducerId: -1, clientTransactionVersion: 0 });
  });

  it('writes value version 1 at transaction.version 2: PreviousProducerId, NextProducerId and ClientTransactionVersion tagged', () => {
    const value = {
      producerId: 5, previousProducerId: 5, nextProducerId: 9, producerEpoch: 32767, transactionTimeoutMs: 60_000,
      state: TransactionState.PrepareCommit, partitions: [{ topic: 'out', partition: 3 }],
      lastUpdateTimestampMs: 100, startTimestampMs: 90, clientTransactionVersion: 2,
    };
    // Tags in order: 0 PreviousProducerId, 1 NextProducerId, 2 ClientTransactionVersion (3, NextProducerEpoch, is never written).
    const bytes = hex(`0001 0000000000000005 7fff 0000ea60 02
      02 04 6f7574 02 00000003 00
      0000000000000064 000000000000005a
      03 00 08 0000000000000005 01 08 0000000000000009 02 02 0002`);
    expect(encodeTransactionLogValue(value, transactionLogValueVersion(2))).to.deep.equal(bytes);
    expect(decodeTransactionLogValue(bytes)).to.deep.equal(value);
    // Fields at their defaults are left out, as Kafka's tagged fields are.
    const complete = encodeTransactionLogValue({ ...value, nextProducerId: -1, clientTransactionVersion: 0 }, 1);
    expect(complete.subarray(complete.length - 11)).to.deep.equal(hex('01 00 08 0000000000000005'));
  });

  it('writes no partitions (a null array) for an Empty transaction', () => {
    const bytes = encodeTransactionLogValue({
      producerId: 5, previousProducerId: -1, nextProducerId: -1, producerEpoch: 0, transactionTimeoutMs: 60_000,
      state: TransactionState.Empty, partitions: [], lastUpdateTimestampMs: 100, startTimestampMs: -1, clientTransactionVersion: 0,
    }, 0);
    expect(bytes.subarray(17, 21)).to.deep.equal(hex('ffffffff'));
    expect(decodeTransactionLogValue(bytes).partitions).to.deep.equal([]);
  });

  it('reads version 1 with only ClientTransactionVersion tagged', () => {
    const bytes = hex(`0001 0000000000000005 0002 0000ea60 04
      02 04 6f7574 02 00000003 00
      0000000000000064 000000000000005a
      01 02 02 0002`);
    expect(decodeTransactionLogValue(bytes)).to.deep.equal({
      producerId: 5, previousProducerId: -1, nextProducerId: -1, producerEpoch: 2, transactionTimeoutMs: 60_000,
      state: TransactionState.CompleteCommit, partitions: [{ topic: 'out', partition: 3 }], lastUpdateTimestampMs: 100,
      startTimestampMs: 90, clientTransactionVersion: 2,
    });
  });

  it('refuses a value version or status it does not know', () => {
    expect(() => decodeTransactionLogValue(hex('0002 0000000000000005'))).to.throw(/version 2/);
    const bad = encodeTransactionLogValue({
      producerId: 5, previousProducerId: -1, nextProducerId: -1, producerEpoch: 0, transactionTimeoutMs: 1,
      state: TransactionState.Empty, partitions: [], lastUpdateTimestampMs: 0, startTimestampMs: 0, clientTransactionVersion: 0,
    }, 0);
    bad[16] = 9;
    expect(() => decodeTransactionLogValue(bad)).to.throw(/status 9/);
  });
});
