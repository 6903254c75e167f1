// __share_group_state's records and keys against what Kafka 4.4's share coordinator writes and hashes
// (the hex and partitions below were printed by ShareCoordinatorRecordSerde, ShareCoordinatorRecordHelpers
// and Utils.abs(SharePartitionKey.asCoordinatorKey().hashCode()) % 50 of kafka-share-coordinator-4.4.0).
import { expect } from 'chai';
import { DeliveryState } from '../../src/share-state/persister';
import { coordinatorKey, parseSharePartitionKey, shareStatePartitionFor } from '../../src/share-state/share-state-log';
import { decodeShareStateRecord, encodeShareStateRecord, type ShareSnapshot } from '../../src/share-state/share-state-records';

const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ''), 'hex');
const TOPIC_ID = '000102030405060708090a0b0c0d0e0f'; // Kafka prints it AAECAwQFBgcICQoLDA0ODw
const key = { groupId: 'group-a', topicId: TOPIC_ID, partition: 1 };
const snapshot: ShareSnapshot = {
  snapshotEpoch: 2, stateEpoch: 3, leaderEpoch: 4, startOffset: 100n, deliveryCompleteCount: 7,
  createTimestamp: 1700000000000, writeTimestamp: 1700000000001,
  stateBatches: [
    { firstOffset: 100n, lastOffset: 109n, deliveryState: DeliveryState.ACKNOWLEDGED, deliveryCount: 1 },
    { firstOffset: 110n, lastOffset: 119n, deliveryState: DeliveryState.AVAILABLE, deliveryCount: 3 },
  ],
};
const BATCHES = '03 0000000000000064 000000000000006d 02 0001 00 000000000000006e 0000000000000077 00 0003 00';

describe('share-state/records', () => {
  it('writes a ShareSnapshot as Kafka: key type 0, value version 0 with the tagged DeliveryCompleteCount', () => {
    const { key: k, value: v } = encodeShareStateRecord({ type: 'snapshot', key, value: snapshot });
    expect(k).to.deep.equal(hex('0000 0007 67726f75702d61 000102030405060708090a0b0c0d0e0f 00000001'));
    expect(v).to.deep.equal(hex(`0000 00000002 00000003 00000004 0000000000000064 0000018bcfe56800 0000018bcfe56801 ${BATCHES} 01 00 04 00000007`));
    expect(decodeShareStateRecord(k, v)).to.deep.equal({ type: 'snapshot', key, value: snapshot });
  });

  it('writes a ShareUpdate as Kafka: key type 1, no state epoch or timestamps', () => {
    const update = {
      snapshotEpoch: 2, leaderEpoch: 4, startOffset: 100n, deliveryCompleteCount: 7, stateBatches: snapshot.stateBatches,
    };
    const { key: k, value: v } = encodeShareStateRecord({ type: 'update', key, value: update });
    expect(k).to.deep.equal(hex('0001 0007 67726f75702d61 000102030405060708090a0b0c0d0e0f 00000001'));
    expect(v).to.deep.equal(hex(`0000 00000002 00000004 0000000000000064 ${BATCHES} 01 00 04 00000007`));
    expect(decodeShareStateRecord(k, v)).to.deep.equal({ type: 'update', key, value: update });
  });

  it('reads a tombstone as a snapshot without value, and skips record types it does not know', () => {
    const { key: k, value } = encodeShareStateRecord({ type: 'snapshot', key, value: null });
    expect(value).to.equal(null);
    expect(decodeShareStateRecord(k, null)).to.deep.equal({ type: 'snapshot', key, value: null });
    expect(decodeShareStateRecord(hex('0003 0001 67'), null)).to.equal(null);
    expect(() => decodeShareStateRecord(k, hex('0001 00'))).to.throw(/version 1/);
  });

  it('places a key on Kafka\'s partition: the hash of "groupId:base64urlTopicId:partition"', () => {
    expect(coordinatorKey(key)).to.equal('group-a:AAECAwQFBgcICQoLDA0ODw:1');
    const expected: [string, number, number][] = [
      ['group-a', 0, 9], ['group-a', 1, 8], ['group-a', 2, 7], ['my-share-group', 0, 14], ['my-share-group', 2, 12], ['q', 0, 49], ['q', 2, 47],
    ];
    for (const [groupId, partition, at] of expected) {
      expect(shareStatePartitionFor({ groupId, topicId: TOPIC_ID, partition }, 50), `${groupId}-${partition}`).to.equal(at);
    }
  });

  it('reads FindCoordinator share keys as Kafka\'s SharePartitionKey.getInstance does', () => {
    expect(parseSharePartitionKey('group-a:AAECAwQFBgcICQoLDA0ODw:1')).to.deep.equal(key);
    // The group id may hold colons; the partition may be signed or zero-padded (Integer.parseInt).
    expect(parseSharePartitionKey('a:b:AAECAwQFBgcICQoLDA0ODw:+07')).to.deep.equal({ groupId: 'a:b', topicId: TOPIC_ID, partition: 7 });
    for (const bad of ['', 'group-a', 'group-a:AAECAwQFBgcICQoLDA0ODw', 'group-a:AAECAwQFBgcICQoLDA0ODw:', ' :AAECAwQFBgcICQoLDA0ODw:1',
      'g:not-a-uuid:1', 'g:AAECAwQFBgcICQoLDA0O:1', 'g:AAECAwQFBgcICQoLDA0ODw:x', 'g:AAECAwQFBgcICQoLDA0ODw:4294967296']) {
      expect(parseSharePartitionKey(bad), bad).to.equal(null);
    }
  });
});
