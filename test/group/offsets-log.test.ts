import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { startBroker, type RunningBroker } from '../../src/broker';
import { Controller } from '../../src/cluster/controller';
import { LocalMetadata } from '../../src/cluster/metadata-backend';
import { MetadataStore } from '../../src/cluster/metadata-store';
import { BrokerConfig } from '../../src/config/broker-config';
import { createLogger } from '../../src/common/logger';
import { ReplicaManager } from '../../src/replica/replica-manager';
import { javaStringHashCode } from '../../src/cluster/coordinator-partition';
import {
  deletionAppendError,
  groupMetadataAppendError,
  offsetCommitAppendError,
  OffsetsLog,
  OFFSETS_TOPIC,
} from '../../src/group/offsets-log';
import type { GroupSnapshot, LoadedGroup, TopicPartitionOffset } from '../../src/group/store';
import {
  decodeGroupMetadataValue,
  decodeKey,
  decodeOffsetCommitValue,
  encodeGroupMetadataKey,
  encodeGroupMetadataValue,
  encodeOffsetCommitKey,
  encodeOffsetCommitValue,
  offsetCommitValueVersion,
} from '../../src/group/offsets-records';
import { ErrorCode } from '../../src/common/errors';
import { ProtocolError } from '../../src/protocol/primitives';
import { buildBatchSync, buildEndTxnMarker, decodeRecords } from '../../src/records/records';

/** Every partition's groups, as a coordinator that leads them all loads them. */
async function loadEveryPartition(log: OffsetsLog): Promise<LoadedGroup[]> {
  const groups: LoadedGroup[] = [];
  for (let p = 0; p < log.numPartitions; p++) groups.push(...await log.loadPartition(p));
  return groups;
}

const hex = (s: string): Buffer => Buffer.from(s.replace(/[\s|]/g, ''), 'hex');

// Bytes produced by Kafka 4.1.1's own classes (kafka-group-coordinator-4.1.1.jar): the generated
// OffsetCommitKey / LegacyOffsetCommitKey / GroupMetadataKey / OffsetCommitValue / GroupMetadataValue
// serialized with MessageUtil.toVersionPrefixedBytes(version, message), which is what
// CoordinatorRecordSerde writes as record key and value. Inputs are the ones used below.
const KAFKA = {
  keyOffsetV1: '000100086d792d67726f757000066f726465727300000003',
  keyOffsetV0: '000000086d792d67726f757000066f726465727300000003',
  keyGroup: '000200086d792d67726f7570',
  offsetValue: [
    '0000000000000000002a00046d6574610000018bcfe56800',
    '0001000000000000002a00046d6574610000018bcfe568000000018bcfee8fc0',
    '0002000000000000002a00046d6574610000018bcfe56800',
    '0003000000000000002a0000000700046d6574610000018bcfe56800',
    '0004000000000000002a00000007056d6574610000018bcfe5680000',
  ],
  offsetValueV4TopicId: '0004000000000000002a00000007056d6574610000018bcfe56800010010000102030405060708090a0b0c0d0e0f',
  groupValue: [
    '00000008636f6e73756d657200000005000572616e676500036d2d310000000200036d2d310002633100092f31302e302e302e310000afc800000003000102000000010900036d2d320002633200092f31302e302e302e32000027100000000000000000',
    '00010008636f6e73756d657200000005000572616e676500036d2d310000000200036d2d310002633100092f31302e302e302e310000ea600000afc800000003000102000000010900036d2d320002633200092f31302e302e302e3200007530000027100000000000000000',
    '00020008636f6e73756d657200000005000572616e676500036d2d310000018bcfe5687b0000000200036d2d310002633100092f31302e302e302e310000ea600000afc800000003000102000000010900036d2d320002633200092f31302e302e302e3200007530000027100000000000000000',
    '00030008636f6e73756d657200000005000572616e676500036d2d310000018bcfe5687b0000000200036d2d310006696e73742d310002633100092f31302e302e302e310000ea600000afc800000003000102000000010900036d2d32ffff0002633200092f31302e302e302e3200007530000027100000000000000000',
    '000409636f6e73756d6572000000050672616e6765046d2d310000018bcfe5687b03046d2d3107696e73742d310363310a2f31302e302e302e310000ea600000afc804000102020900046d2d32000363320a2f31302e302e302e32000075300000271001010000',
  ],
  emptyGroupV3: '0003000000000000ffffffff0000018bcfe5687b00000000',
  emptyGroupV4: '0004010000000000000000018bcfe5687b0100',
};

const OFFSET = { offset: 42, leaderEpoch: 7, metadata: 'meta', commitTimestamp: 1700000000000, expireTimestamp: -1 };
const GROUP: GroupSnapshot = {
  protocolType: 'consumer', generationId: 5, protocolName: 'range', leader: 'm-1', currentStateTimestamp: 1700000000123,
  members: [
    { memberId: 'm-1', groupInstanceId: 'inst-1', clientId: 'c1', clientHost: '/10.0.0.1', rebalanceTimeoutMs: 60000,
      sessionTimeoutMs: 45000, subscription: Buffer.from([0, 1, 2]), assignment: Buffer.from([9]) },
    { memberId: 'm-2', groupInstanceId: null, clientId: 'c2', clientHost: '/10.0.0.2', rebalanceTimeoutMs: 30000,
      sessionTimeoutMs: 10000, subscription: Buffer.alloc(0), assignment: Buffer.alloc(0) },
  ],
};

/** What a version keeps of GROUP: the fields it lacks come back as their defaults. */
function groupAsOfVersion(v: number): GroupSnapshot {
  return {
    ...GROUP,
    currentStateTimestamp: v >= 2 ? GROUP.currentStateTimestamp : -1,
    members: GROUP.members.map((m) => ({
      ...m,
      groupInstanceId: v >= 3 ? m.groupInstanceId : null,
      rebalanceTimeoutMs: v >= 1 ? m.rebalanceTimeoutMs : m.sessionTimeoutMs,
    })),
  };
}

describe('__consumer_offsets record formats', () => {
  describe('hand-checked bytes, one vector per record type', () => {
    it('OffsetCommitKey (record type 1)', () => {
      const expected = hex(
        '0001' + //                 int16 record type 1 = OffsetCommitKey
        '0008 6d792d67726f7570' + // group: int16 length 8, "my-group"
        '0006 6f7264657273' + //     topic: int16 length 6, "orders"
        '00000003', //               partition: int32 3
      );
      expect(encodeOffsetCommitKey('my-group', 'orders', 3).equals(expected)).to.equal(true);
      expect(decodeKey(expected)).to.deep.equal({ kind: 'offset', type: 1, group: 'my-group', topic: 'orders', partition: 3 });
    });

    it('GroupMetadataKey (record type 2)', () => {
      const expected = hex('0002' + '0008 6d792d67726f7570'); // int16 type 2 | group "my-group"
      expect(encodeGroupMetadataKey('my-group').equals(expected)).to.equal(true);
      expect(decodeKey(expected)).to.deep.equal({ kind: 'group', type: 2, group: 'my-group' });
    });

    it('OffsetCommitValue v3 (what Fjord writes)', () => {
      const expected = hex(
        '0003' + //                  int16 value version 3
        '000000000000002a' + //      offset: int64 42
        '00000007' + //              leaderEpoch (v3+): int32 7
        '0004 6d657461' + //         metadata: int16 length 4, "meta"
        '0000018bcfe56800', //       commitTimestamp: int64 1700000000000 = 0x18BCFE56800 (no expireTimestamp: v1 only)
      );
      expect(encodeOffsetCommitValue(OFFSET).equals(expected)).to.equal(true);
      expect(decodeOffsetCommitValue(expected)).to.deep.include({ version: 3, ...OFFSET });
    });

    it('GroupMetadataValue v3 (what Fjord writes)', () => {
      const expected = hex(
        '0003' + //                       int16 value version 3
        '0008 636f6e73756d6572' + //      protocolType "consumer"
        '00000001' + //                   generation 1
        '0005 72616e6765' + //            protocol (nullable string) "range"
        '0001 6d' + //                    leader (nullable string) "m"
        '0000018bcfe56800' + //           currentStateTimestamp (v2+) 1700000000000
        '00000001' + //                   members: int32 count 1
        '0001 6d' + //                      memberId "m"
        'ffff' + //                         groupInstanceId (v3+, nullable): null = length -1
        '0001 63' + //                      clientId "c"
        '0002 2f68' + //                    clientHost "/h"
        '000493e0' + //                     rebalanceTimeout (v1+) 300000
        '0000afc8' + //                     sessionTimeout 45000
        '00000001 01' + //                  subscription: int32 length 1, 0x01
        '00000000', //                      assignment: int32 length 0
      );
      const group: GroupSnapshot = {
        protocolType: 'consumer', generationId: 1, protocolName: 'range', leader: 'm', currentStateTimestamp: 1700000000000,
        members: [{ memberId: 'm', groupInstanceId: null, clientId: 'c', clientHost: '/h', rebalanceTimeoutMs: 300000,
          sessionTimeoutMs: 45000, subscription: Buffer.from([1]), assignment: Buffer.alloc(0) }],
      };
      expect(encodeGroupMetadataValue(group).toString('hex')).to.equal(expected.toString('hex'));
      expect(decodeGroupMetadataValue(expected)).to.deep.equal({ version: 3, ...group });
    });
  });

  describe("every key and value version against Kafka 4.1.1's serializer", () => {
    it('keys: OffsetCommitKey (type 1), LegacyOffsetCommitKey (type 0), GroupMetadataKey (type 2)', () => {
      expect(encodeOffsetCommitKey('my-group', 'orders', 3).toString('hex')).to.equal(KAFKA.keyOffsetV1);
      expect(encodeOffsetCommitKey('my-group', 'orders', 3, 0).toString('hex')).to.equal(KAFKA.keyOffsetV0);
      expect(encodeGroupMetadataKey('my-group').toString('hex')).to.equal(KAFKA.keyGroup);
      expect(decodeKey(hex(KAFKA.keyOffsetV0))).to.deep.equal({ kind: 'offset', type: 0, group: 'my-group', topic: 'orders', partition: 3 });
      expect(decodeKey(hex(KAFKA.keyOffsetV1))).to.deep.equal({ kind: 'offset', type: 1, group: 'my-group', topic: 'orders', partition: 3 });
      expect(decodeKey(hex(KAFKA.keyGroup))).to.deep.equal({ kind: 'group', type: 2, group: 'my-group' });
      // Type 3 is ConsumerGroupMetadataKey (KIP-848): known to Kafka, skipped here.
      expect(decodeKey(hex('0003 0008 6d792d67726f7570'))).to.deep.equal({ kind: 'unknown', type: 3 });
    });

    for (let v = 0; v <= 4; v++) {
      it(`OffsetCommitValue v${v}`, () => {
        const input = { ...OFFSET, expireTimestamp: v === 1 ? 1700000600000 : -1 };
        expect(encodeOffsetCommitValue(input, v).toString('hex')).to.equal(KAFKA.offsetValue[v]);
        expect(decodeOffsetCommitValue(hex(KAFKA.offsetValue[v]))).to.deep.equal({
          version: v, offset: 42, leaderEpoch: v >= 3 ? 7 : -1, metadata: 'meta', commitTimestamp: 1700000000000,
          expireTimestamp: v === 1 ? 1700000600000 : -1, topicId: '00000000000000000000000000000000',
        });
      });
    }

    it('OffsetCommitValue v4 with the tagged topicId (Kafka 4.1), and an unknown tag skipped', () => {
      const topicId = '000102030405060708090a0b0c0d0e0f';
      expect(encodeOffsetCommitValue({ ...OFFSET, topicId }, 4).toString('hex')).to.equal(KAFKA.offsetValueV4TopicId);
      expect(decodeOffsetCommitValue(hex(KAFKA.offsetValueV4TopicId))).to.deep.include({ version: 4, offset: 42, topicId });
      // Same record with a second, unknown tag (tag 5, 2 bytes) after the topicId: still reads.
      const withUnknown = hex(KAFKA.offsetValueV4TopicId.replace('010010', '020010') + '0502abcd');
      expect(withUnknown.length).to.equal(hex(KAFKA.offsetValueV4TopicId).length + 4);
      expect(decodeOffsetCommitValue(withUnknown)).to.deep.include({ version: 4, offset: 42, metadata: 'meta', topicId });
    });

    for (let v = 0; v <= 4; v++) {
      it(`GroupMetadataValue v${v}`, () => {
        expect(encodeGroupMetadataValue(GROUP, v).toString('hex')).to.equal(KAFKA.groupValue[v]);
        expect(decodeGroupMetadataValue(hex(KAFKA.groupValue[v]))).to.deep.equal({ version: v, ...groupAsOfVersion(v) });
      });
    }

    it('GroupMetadataValue of an empty group (null protocol and leader, no members), v3 and v4', () => {
      const empty: GroupSnapshot = { protocolType: '', generationId: 0, protocolName: null, leader: null, currentStateTimestamp: 1700000000123, members: [] };
      expect(encodeGroupMetadataValue(empty).toString('hex')).to.equal(KAFKA.emptyGroupV3);
      expect(encodeGroupMetadataValue(empty, 4).toString('hex')).to.equal(KAFKA.emptyGroupV4);
      expect(decodeGroupMetadataValue(hex(KAFKA.emptyGroupV3))).to.deep.equal({ version: 3, ...empty });
      expect(decodeGroupMetadataValue(hex(KAFKA.emptyGroupV4))).to.deep.equal({ version: 4, ...empty });
    });
  });

  it('writes OffsetCommitValue v3, or v1 when the commit has an expire timestamp (GroupCoordinatorRecordHelpers)', () => {
    expect(offsetCommitValueVersion(-1)).to.equal(3);
    expect(offsetCommitValueVersion(1700000600000)).to.equal(1);
    expect(encodeOffsetCommitValue({ ...OFFSET, expireTimestamp: 1700000600000 }).toString('hex')).to.equal(KAFKA.offsetValue[1]);
    expect(encodeGroupMetadataValue(GROUP).readInt16BE(0)).to.equal(3);
  });

  it('rejects truncated values, unknown versions and a null members array', () => {
    const v3 = hex(KAFKA.offsetValue[3]);
    expect(() => decodeOffsetCommitValue(v3.subarray(0, v3.length - 1))).to.throw(ProtocolError);
    expect(() => decodeOffsetCommitValue(hex('0005' + KAFKA.offsetValue[3].slice(4)))).to.throw(ProtocolError, /version 5/);
    expect(() => decodeGroupMetadataValue(hex(KAFKA.groupValue[3]).subarray(0, 40))).to.throw(ProtocolError);
    expect(() => decodeGroupMetadataValue(hex('0003 0000 00000000 ffff ffff 0000000000000000 ffffffff'))).to.throw(ProtocolError, /members/);
    expect(() => decodeKey(hex('0001 0008 6d79'))).to.throw(ProtocolError);
  });
});

describe('OffsetsLog.partitionFor', () => {
  it("is Kafka's Utils.abs(groupId.hashCode()) % n", () => {
    // Expected values printed by Java 17 with Kafka 4.1.1's Utils:
    //   g.hashCode(), Utils.abs(g.hashCode()) % 50
    // and re-derived in Python: h = (31*h + ord(c)) & 0xffffffff per UTF-16 unit, as signed int32.
    expect(javaStringHashCode('my-group')).to.equal(-1906497762);
    expect(OffsetsLog.partitionFor('my-group', 50)).to.equal(12); // the `h & 0x7fffffff` form would give 36
    expect(OffsetsLog.partitionFor('my-group', 7)).to.equal(1); //   1906497762 % 7
    expect(OffsetsLog.partitionFor('console-consumer-12345', 50)).to.equal(6); // hash 158455506
    expect(OffsetsLog.partitionFor('group-1', 50)).to.equal(49); //               hash 293427299
    expect(OffsetsLog.partitionFor('', 50)).to.equal(0);
    expect(javaStringHashCode('polygenelubricants')).to.equal(-2147483648); // Integer.MIN_VALUE: Utils.abs -> 0
    expect(OffsetsLog.partitionFor('polygenelubricants', 50)).to.equal(0);
    expect(javaStringHashCode('ünïcødé-grøup')).to.equal(1068704242);
    expect(OffsetsLog.partitionFor('ünïcødé-grøup', 50)).to.equal(42);
  });
});

describe('append error mapping', () => {
  it('offset commits, group metadata and deletions as Kafka maps them', () => {
    const E = ErrorCode;
    for (const [code, commit, group, del] of [
      [E.NONE, E.NONE, E.NONE, E.NONE],
      [E.UNKNOWN_TOPIC_OR_PARTITION, E.COORDINATOR_NOT_AVAILABLE, E.COORDINATOR_NOT_AVAILABLE, E.COORDINATOR_NOT_AVAILABLE],
      [E.NOT_ENOUGH_REPLICAS, E.COORDINATOR_NOT_AVAILABLE, E.COORDINATOR_NOT_AVAILABLE, E.COORDINATOR_NOT_AVAILABLE],
      [E.NOT_LEADER_OR_FOLLOWER, E.NOT_COORDINATOR, E.NOT_COORDINATOR, E.NOT_COORDINATOR],
      [E.KAFKA_STORAGE_ERROR, E.NOT_COORDINATOR, E.NOT_COORDINATOR, E.NOT_COORDINATOR],
      [E.REQUEST_TIMED_OUT, E.REQUEST_TIMED_OUT, E.REBALANCE_IN_PROGRESS, E.COORDINATOR_NOT_AVAILABLE],
      [E.MESSAGE_TOO_LARGE, E.INVALID_COMMIT_OFFSET_SIZE, E.UNKNOWN_SERVER_ERROR, E.UNKNOWN_SERVER_ERROR],
      [E.RECORD_LIST_TOO_LARGE, E.INVALID_COMMIT_OFFSET_SIZE, E.UNKNOWN_SERVER_ERROR, E.UNKNOWN_SERVER_ERROR],
      [E.INVALID_FETCH_SIZE, E.INVALID_COMMIT_OFFSET_SIZE, E.UNKNOWN_SERVER_ERROR, E.UNKNOWN_SERVER_ERROR],
      [E.INVALID_RECORD, E.INVALID_RECORD, E.INVALID_RECORD, E.INVALID_RECORD],
    ]) {
      expect([offsetCommitAppendError(code), groupMetadataAppendError(code), deletionAppendError(code)], `code ${code}`)
        .to.deep.equal([commit, group, del]);
    }
  });
});

// ---------------------------------------------------------------------------------------------------------
// Against storage and a broker
// ---------------------------------------------------------------------------------------------------------

const commit = (topic: string, partition: number, offset: number, extra: Partial<TopicPartitionOffset> = {}): TopicPartitionOffset => ({
  topic, partition, offset, leaderEpoch: 0, metadata: '', commitTimestamp: 1700000000000 + offset, expireTimestamp: -1, ...extra,
});

function byId(groups: LoadedGroup[]): Map<string, LoadedGroup> {
  return new Map(groups.map((g) => [g.groupId, g]));
}

/** The storage stack without a broker (no group coordinator of its own writing to __consumer_offsets). */
async function openStorage(dataDir: string) {
  const config = BrokerConfig.load({ flags: { host: '127.0.0.1', port: 0, dataDir } });
  const store = await MetadataStore.open(config.dataDir, config.nodeId);
  const replicas = await ReplicaManager.open(config, store, createLogger({ level: 'silent' }));
  const controller = new Controller(new LocalMetadata(store, { nodeId: config.nodeId, host: '127.0.0.1', port: 0, rack: null }, replicas), config);
  return {
    nodeId: config.nodeId, replicas, controller,
    close: async () => {
      await replicas.close();
      await store.close();
    },
  };
}

describe('OffsetsLog against the storage stack', function () {
  this.timeout(30000);
  let dataDir: string;
  const closers: Array<() => Promise<void>> = [];
  const open = async () => {
    const s = await openStorage(dataDir);
    closers.push(s.close);
    return s;
  };
  beforeEach(async () => { dataDir = await mkdtemp(path.join(os.tmpdir(), 'fjord-offsets-')); });
  afterEach(async () => {
    for (const close of closers.splice(0)) await close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it("ensureTopic creates __consumer_offsets once, with Kafka's configs, capping the replication factor", async () => {
    const { controller, replicas, nodeId } = await open();
    // Each caller, when its promise settles, must find every partition open (the second shares the first's creation).
    const call = () => OffsetsLog.ensureTopic(controller, 5, 3)
      .then((r) => [r.errorCode, Array.from({ length: 5 }, (_, i) => replicas.partition(OFFSETS_TOPIC, i) !== undefined)]);
    const results = await Promise.all([call(), call()]);
    const allOpen = Array.from({ length: 5 }, () => true);
    expect(results).to.deep.equal([[ErrorCode.NONE, allOpen], [ErrorCode.NONE, allOpen]]);
    const topic = controller.topic(OFFSETS_TOPIC)!;
    expect(topic.partitions.map((p) => p.replicas)).to.deep.equal(Array.from({ length: 5 }, () => [nodeId]));
    expect(topic.configs).to.deep.equal({ 'cleanup.policy': 'compact', 'compression.type': 'producer', 'segment.bytes': '104857600' });
    for (let i = 0; i < 5; i++) expect(replicas.partition(OFFSETS_TOPIC, i)!.log.config.compact).to.equal(true);
    expect(replicas.partition(OFFSETS_TOPIC, 0)!.log.config.segmentBytes).to.equal(104857600);
    // An existing topic is left as it is.
    expect((await OffsetsLog.ensureTopic(controller, 9, 1, 2000000)).errorCode).to.equal(ErrorCode.NONE);
    expect(controller.topic(OFFSETS_TOPIC)!.partitions).to.have.length(5);
  });

  it('passes offsets.topic.segment.bytes through and reports a creation failure', async () => {
    const { controller } = await open();
    const bad = await OffsetsLog.ensureTopic(controller, 0, 1);
    expect(bad.errorCode).to.equal(ErrorCode.INVALID_PARTITIONS);
    expect(controller.topic(OFFSETS_TOPIC)).to.equal(undefined);
    expect((await OffsetsLog.ensureTopic(controller, 2, 1, 2000000)).errorCode).to.equal(ErrorCode.NONE);
    expect(controller.topic(OFFSETS_TOPIC)!.configs['segment.bytes']).to.equal('2000000');
  });

  it('replays transactional commits on their COMMIT marker, drops aborted ones, skips unknown and broken records', async () => {
    const { controller, replicas } = await open();
    await OffsetsLog.ensureTopic(controller, 1, 1);
    const log = new OffsetsLog(replicas, 1);
    const p = replicas.partition(OFFSETS_TOPIC, 0)!;
    const offsetRecord = (topic: string, offset: number) => ({
      key: encodeOffsetCommitKey('tx', topic, 0), value: encodeOffsetCommitValue({ ...OFFSET, offset }),
    });
    const txn = (producerId: number, records: ReturnType<typeof offsetRecord>[]) =>
      buildBatchSync({ producerId, producerEpoch: 0, baseSequence: 0, isTransactional: true, records });
    await p.log.append(txn(7, [offsetRecord('committed', 1), offsetRecord('overtaken', 1)])).done;
    await p.log.append(txn(8, [offsetRecord('aborted', 1)])).done;
    // A plain commit of "overtaken" after the transactional one: it must win over the later COMMIT marker.
    expect(await log.storeOffsets('tx', [commit('overtaken', 0, 50)])).to.equal(ErrorCode.NONE);
    await p.log.append(buildEndTxnMarker({ commit: true, producerId: 7, producerEpoch: 0, coordinatorEpoch: 0 })).done;
    await p.log.append(buildEndTxnMarker({ commit: false, producerId: 8, producerEpoch: 0, coordinatorEpoch: 0 })).done;
    // Records this broker cannot use: a KIP-848 record type, an unknown value version.
    const skipped = buildBatchSync({ records: [
      { key: Buffer.from('0003' + '0002' + '7478', 'hex'), value: Buffer.from('0000', 'hex') },
      { key: encodeOffsetCommitKey('tx', 'broken', 0), value: Buffer.from('0009' + '00'.repeat(30), 'hex') },
      offsetRecord('after-broken', 3),
    ] });
    const res = await replicas.append(p, skipped, 0, { produceVersion: 11, nowMs: Date.now() });
    expect(res.errorCode).to.equal(ErrorCode.NONE);
    await res.done;

    // Transactions without a marker yet: producer 9's offsets stay pending (its second batch of the
    // same epoch, sequence 0 again, must not pass for a retry of the first); producer 10's lose
    // their partition to a tombstone.
    expect(await log.storeTxnOffsets('tx', { producerId: 9, producerEpoch: 3 }, [commit('open', 0, 5)])).to.equal(ErrorCode.NONE);
    expect(await log.storeTxnOffsets('tx', { producerId: 9, producerEpoch: 3 }, [commit('open', 1, 6)])).to.equal(ErrorCode.NONE);
    expect(await log.storeTxnOffsets('tx', { producerId: 10, producerEpoch: 0 }, [commit('deleted', 0, 7)])).to.equal(ErrorCode.NONE);
    expect(await log.deleteOffsets('tx', [{ topic: 'deleted', partition: 0 }])).to.equal(ErrorCode.NONE);
    const lastTxnBatch = await p.log.readBytes(p.log.logEndOffset - 2, 1 << 20);
    if (lastTxnBatch.outOfRange) throw new Error('out of range');
    const header = lastTxnBatch.records;
    expect([header.readBigInt64BE(43), header.readInt16BE(51), header.readInt32BE(53), (header.readInt16BE(21) >> 4) & 1])
      .to.deep.equal([10n, 0, 0, 1]); // producerId, producerEpoch, baseSequence 0, transactional

    const loaded = await loadEveryPartition(log);
    expect(loaded.map((g) => g.groupId)).to.deep.equal(['tx']);
    const [tx] = loaded;
    expect([...tx.offsets.keys()].sort()).to.deep.equal(['after-broken:0', 'committed:0', 'overtaken:0']);
    expect(tx.offsets.get('committed:0')!.offset).to.equal(1);
    expect(tx.offsets.get('overtaken:0')!.offset).to.equal(50);
    expect([...tx.pendingTxnOffsets.keys()]).to.deep.equal([9]);
    expect([...tx.pendingTxnOffsets.get(9)!.values()].map((o) => [o.topic, o.partition, o.offset])).to.deep.equal([['open', 0, 5], ['open', 1, 6]]);
  });

  it('maps append failures to coordinator errors', async () => {
    const { controller, replicas } = await open();
    // Our own __consumer_offsets: one partition, and a small max.message.bytes.
    const created = await controller.createTopic({ name: OFFSETS_TOPIC, numPartitions: 1, replicationFactor: 1, assignments: [],
      configs: { 'cleanup.policy': 'compact', 'max.message.bytes': '300' } }, false);
    expect(created.errorCode).to.equal(ErrorCode.NONE);
    const log = new OffsetsLog(replicas, 1);
    expect(await log.storeOffsets('g', [commit('t', 0, 1)])).to.equal(ErrorCode.NONE);
    expect(await log.storeOffsets('g', [commit('t', 0, 2, { metadata: 'x'.repeat(400) })])).to.equal(ErrorCode.INVALID_COMMIT_OFFSET_SIZE);
    expect(await log.storeGroup('g', { ...GROUP, members: [{ ...GROUP.members[0], subscription: Buffer.alloc(400) }] }))
      .to.equal(ErrorCode.UNKNOWN_SERVER_ERROR);
    const many = Array.from({ length: 40 }, (_, i) => ({ topic: 'topic', partition: i }));
    expect(await log.deleteOffsets('g', many)).to.equal(ErrorCode.UNKNOWN_SERVER_ERROR);
    // A partition this broker does not have (the topic has 1, the log believes in 50): COORDINATOR_NOT_AVAILABLE.
    const wider = new OffsetsLog(replicas, 50);
    expect(OffsetsLog.partitionFor('my-group', 50)).to.equal(12);
    expect(await wider.storeOffsets('my-group', [commit('t', 0, 1)])).to.equal(ErrorCode.COORDINATOR_NOT_AVAILABLE);
    expect(await wider.storeGroup('my-group', GROUP)).to.equal(ErrorCode.COORDINATOR_NOT_AVAILABLE);
    expect(await wider.deleteGroup('my-group', [])).to.equal(ErrorCode.COORDINATOR_NOT_AVAILABLE);
    // A log that went offline (storage error): NOT_COORDINATOR.
    const p = replicas.partition(OFFSETS_TOPIC, 0)!;
    expect(p.log.logEndOffset).to.equal(1); // nothing but the first commit made it to the log
    const [g] = await loadEveryPartition(log);
    expect(g.offsets.get('t:0')!.offset).to.equal(1);
    await p.log.close();
    expect(await log.storeOffsets('g', [commit('t', 0, 3)])).to.equal(ErrorCode.NOT_COORDINATOR);
    expect(await log.storeGroup('g', GROUP)).to.equal(ErrorCode.NOT_COORDINATOR);
  });
});

describe('OffsetsLog in a broker', function () {
  this.timeout(30000);
  let dataDir: string;
  const running: RunningBroker[] = [];
  /** The broker's group coordinator creates __consumer_offsets at start-up with these partitions. */
  const start = async (partitions: number) => {
    const b = await startBroker({ dataDir, logLevel: 'silent', config: { 'offsets.topic.num.partitions': String(partitions) } });
    running.push(b);
    expect((await OffsetsLog.ensureTopic(b.broker.controller, partitions, 1)).errorCode).to.equal(ErrorCode.NONE);
    expect(b.broker.controller.topic(OFFSETS_TOPIC)!.partitions).to.have.length(partitions);
    return b;
  };
  beforeEach(async () => { dataDir = await mkdtemp(path.join(os.tmpdir(), 'fjord-offsets-')); });
  afterEach(async () => {
    for (const b of running.splice(0)) await b.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it("stores groups and offsets in Kafka's bytes on the group's partition, and loads them after a restart", async () => {
    const first = await start(50);
    const log1 = new OffsetsLog(first.broker.replicas, 50);
    const p12 = first.broker.replicas.partition(OFFSETS_TOPIC, 12)!;
    const startOffset = p12.log.logEndOffset;
    expect(await log1.storeGroup('my-group', { ...GROUP, generationId: 4 })).to.equal(ErrorCode.NONE);
    expect(await log1.storeOffsets('my-group', [commit('orders', 3, 10), commit('orders', 4, 20)])).to.equal(ErrorCode.NONE);
    // Last write wins: a later group state and a later commit of orders-3.
    expect(await log1.storeGroup('my-group', GROUP)).to.equal(ErrorCode.NONE);
    expect(await log1.storeOffsets('my-group', [{ topic: 'orders', partition: 3, ...OFFSET }])).to.equal(ErrorCode.NONE);
    const expiring = commit('payments', 0, 5, { expireTimestamp: 1700000999999, leaderEpoch: 2 });
    expect(await log1.storeOffsets('other', [expiring])).to.equal(ErrorCode.NONE);

    // The records are on partition 12 (Utils.abs("my-group".hashCode()) % 50), byte for byte Kafka's.
    expect(p12.log.logEndOffset - startOffset).to.equal(5);
    const read = await p12.log.readBytes(startOffset, 1 << 20);
    if (read.outOfRange) throw new Error('out of range');
    const batches: Buffer[] = [];
    for (let pos = 0; pos < read.records.length; pos += read.records.readInt32BE(pos + 8) + 12) batches.push(read.records.subarray(pos));
    expect(batches).to.have.length(4);
    const last = await decodeRecords(batches[3]);
    expect(last).to.have.length(1);
    expect(last[0].key!.toString('hex')).to.equal(KAFKA.keyOffsetV1);
    expect(last[0].value!.toString('hex')).to.equal(KAFKA.offsetValue[3]);
    const groupRecord = (await decodeRecords(batches[2]))[0];
    expect(groupRecord.key!.toString('hex')).to.equal(KAFKA.keyGroup);
    expect(groupRecord.value!.toString('hex')).to.equal(KAFKA.groupValue[3]);
    expect(batches[0].readBigInt64BE(43)).to.equal(-1n); // producerId -1
    expect(batches[0].readInt16BE(21) & 0x07).to.equal(0); // uncompressed

    await first.close();
    running.splice(0);
    const second = await start(50);
    const groups = byId(await loadEveryPartition(new OffsetsLog(second.broker.replicas, 50)));
    expect([...groups.keys()].sort()).to.deep.equal(['my-group', 'other']);
    const mine = groups.get('my-group')!;
    expect(mine.group).to.deep.equal(GROUP);
    // Each with the log offset of its record: orders-4 came with the first commit, orders-3 last.
    expect(mine.offsets).to.deep.equal(new Map([
      ['orders:3', { topic: 'orders', partition: 3, ...OFFSET, logOffset: startOffset + 4 }],
      ['orders:4', { ...commit('orders', 4, 20), logOffset: startOffset + 2 }],
    ]));
    expect(mine.pendingTxnOffsets.size).to.equal(0);
    const other = groups.get('other')!;
    expect(other.group).to.equal(null);
    // Written as OffsetCommitValue v1 (it has an expire timestamp), which has no leaderEpoch: Kafka loses it too.
    expect(other.offsets.get('payments:0')).to.deep.include({ ...expiring, leaderEpoch: -1 });
    // loadPartition reads one partition only.
    expect((await new OffsetsLog(second.broker.replicas, 50).loadPartition(12)).map((g) => g.groupId)).to.deep.equal(['my-group']);
  });

  it('tombstones remove offsets and groups on load', async () => {
    const b = await start(3);
    const log = new OffsetsLog(b.broker.replicas, 3);
    for (const g of ['g1', 'g2', 'g3']) {
      expect(await log.storeGroup(g, GROUP)).to.equal(ErrorCode.NONE);
      expect(await log.storeOffsets(g, [commit('t', 0, 1), commit('t', 1, 2), commit('u', 0, 3)])).to.equal(ErrorCode.NONE);
    }
    expect(await log.deleteOffsets('g1', [{ topic: 't', partition: 1 }])).to.equal(ErrorCode.NONE);
    // g2: the group and all its offsets; g3: the group and one offset, two offsets stay.
    expect(await log.deleteGroup('g2', [{ topic: 't', partition: 0 }, { topic: 't', partition: 1 }, { topic: 'u', partition: 0 }])).to.equal(ErrorCode.NONE);
    expect(await log.deleteGroup('g3', [{ topic: 'u', partition: 0 }])).to.equal(ErrorCode.NONE);
    // Deleting an offset, then committing it again, brings the key back.
    expect(await log.deleteOffsets('g1', [{ topic: 'u', partition: 0 }])).to.equal(ErrorCode.NONE);
    expect(await log.storeOffsets('g1', [commit('u', 0, 9)])).to.equal(ErrorCode.NONE);

    const groups = byId(await loadEveryPartition(log));
    expect([...groups.keys()].sort()).to.deep.equal(['g1', 'g3']);
    expect(groups.get('g1')!.group).to.deep.equal(GROUP);
    expect([...groups.get('g1')!.offsets.keys()].sort()).to.deep.equal(['t:0', 'u:0']);
    expect(groups.get('g1')!.offsets.get('u:0')!.offset).to.equal(9);
    expect(groups.get('g3')!.group).to.equal(null);
    expect([...groups.get('g3')!.offsets.keys()].sort()).to.deep.equal(['t:0', 't:1']);
  });

  it('loads the same groups and offsets from a compacted __consumer_offsets after a restart', async () => {
    // Small segments so the commits spread over many; the cleaner runs only when asked.
    const config = { 'offsets.topic.num.partitions': '1', 'offsets.topic.segment.bytes': '4096', 'log.cleaner.backoff.ms': '600000' };
    const first = await startBroker({ dataDir, logLevel: 'silent', config });
    running.push(first);
    expect((await OffsetsLog.ensureTopic(first.broker.controller, 1, 1, 4096)).errorCode).to.equal(ErrorCode.NONE);
    const log = new OffsetsLog(first.broker.replicas, 1);
    for (let round = 0; round < 40; round++) {
      const offsets = Array.from({ length: 4 }, (_, p) => commit('orders', p, round * 10 + p, { metadata: `r${round}` }));
      expect(await log.storeOffsets('g', offsets)).to.equal(ErrorCode.NONE);
      expect(await log.storeGroup('g', { ...GROUP, generationId: round })).to.equal(ErrorCode.NONE);
    }
    expect(await log.deleteOffsets('g', [{ topic: 'orders', partition: 3 }])).to.equal(ErrorCode.NONE);
    expect(await log.storeOffsets('other', [commit('payments', 0, 7)])).to.equal(ErrorCode.NONE);
    const before = await loadEveryPartition(log);

    const partition = first.broker.replicas.partition(OFFSETS_TOPIC, 0)!;
    const [sizeBefore, segmentsBefore] = [partition.log.size, partition.log.segmentInfo().length];
    expect(segmentsBefore).to.be.above(3);
    expect(await first.broker.replicas.logs.logCleaner!.cleanFilthiestLog()).to.equal(true);
    expect(partition.log.size).to.be.below(sizeBefore / 3);
    await first.close();
    running.splice(0);

    const second = await startBroker({ dataDir, logLevel: 'silent', config });
    running.push(second);
    const after = byId(await loadEveryPartition(new OffsetsLog(second.broker.replicas, 1)));
    expect(after).to.deep.equal(byId(before));
    const g = after.get('g')!;
    expect(g.group!.generationId).to.equal(39);
    expect([...g.offsets.keys()].sort()).to.deep.equal(['orders:0', 'orders:1', 'orders:2']);
    expect(g.offsets.get('orders:2')).to.include({ offset: 392, metadata: 'r39' });
  });
});
