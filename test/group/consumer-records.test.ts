// The consumer group records of __consumer_offsets (src/group/consumer-records.ts): their record
// types against Kafka's own specs (the apiKey of each, read from Kafka's group-coordinator jar
// when Maven has it), bytes as Kafka lays them out, and every kind read back as written.
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MemberState } from '../../src/group/consumer-member';
import {
  CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY_TYPE, CONSUMER_GROUP_MEMBER_METADATA_KEY_TYPE, CONSUMER_GROUP_METADATA_KEY_TYPE,
  CONSUMER_GROUP_PARTITION_METADATA_KEY_TYPE, CONSUMER_GROUP_REGULAR_EXPRESSION_KEY_TYPE,
  CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY_TYPE, CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_KEY_TYPE,
  decodeConsumerGroupRecord, encodeConsumerGroupRecord, type ConsumerGroupRecord,
} from '../../src/group/consumer-records';

const KAFKA_VERSION = /^KAFKA_VERSION=(\S+)/m.exec(fs.readFileSync(path.join(__dirname, '..', '..', '..', 'compat', 'lib', 'apache-kafka.sh'), 'utf8'))![1];
const JAR = path.join(process.env.FJORD_MAVEN_REPO ?? path.join(os.homedir(), '.m2', 'repository'),
  'org', 'apache', 'kafka', 'kafka-group-coordinator', KAFKA_VERSION, `kafka-group-coordinator-${KAFKA_VERSION}.jar`);

const TOPIC = '0123456789abcdef0123456789abcdef';

describe('consumer group records', () => {
  it('have the record types of Kafka\'s specs', function () {
    if (!fs.existsSync(JAR)) this.skip();
    const apiKey = (name: string): number => {
      const text = execFileSync('unzip', ['-p', JAR, `common/message/${name}.json`], { encoding: 'utf8' });
      return Number(/"apiKey":\s*(\d+)/.exec(text)![1]);
    };
    expect([
      apiKey('ConsumerGroupMetadataKey'), apiKey('ConsumerGroupPartitionMetadataKey'), apiKey('ConsumerGroupMemberMetadataKey'),
      apiKey('ConsumerGroupTargetAssignmentMetadataKey'), apiKey('ConsumerGroupTargetAssignmentMemberKey'),
      apiKey('ConsumerGroupCurrentMemberAssignmentKey'), apiKey('ConsumerGroupRegularExpressionKey'),
    ]).to.deep.equal([
      CONSUMER_GROUP_METADATA_KEY_TYPE, CONSUMER_GROUP_PARTITION_METADATA_KEY_TYPE, CONSUMER_GROUP_MEMBER_METADATA_KEY_TYPE,
      CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_KEY_TYPE, CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY_TYPE,
      CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY_TYPE, CONSUMER_GROUP_REGULAR_EXPRESSION_KEY_TYPE,
    ]);
  });

  it('lay out the group epoch as Kafka does: type 3, a v0 key; a flexible v0 value, the hash tagged only when set', () => {
    const plain = encodeConsumerGroupRecord({ kind: 'groupEpoch', groupId: 'g', value: { epoch: 5, metadataHash: 0n } });
    expect(plain.key.toString('hex')).to.equal('0003' + '0001' + '67');
    expect(plain.value!.toString('hex')).to.equal('0000' + '00000005' + '00');
    const hashed = encodeConsumerGroupRecord({ kind: 'groupEpoch', groupId: 'g', value: { epoch: 5, metadataHash: 1n } });
    expect(hashed.value!.toString('hex')).to.equal('0000' + '00000005' + '01' + '00' + '08' + '0000000000000001');
    expect(encodeConsumerGroupRecord({ kind: 'groupEpoch', groupId: 'g', value: null }).value).to.equal(null);
  });

  it('lay out a current assignment with its state as Kafka\'s MemberState byte and the assignment epochs tagged', () => {
    const { value } = encodeConsumerGroupRecord({
      kind: 'currentAssignment', groupId: 'g', memberId: 'm', value: {
        memberEpoch: 3, previousMemberEpoch: 2, state: MemberState.UnrevokedPartitions,
        assigned: new Map([[TOPIC, new Map([[1, 3]])]]), pendingRevocation: new Map(),
      },
    });
    expect(value!.toString('hex')).to.equal('0000' + '00000003' + '00000002' + '01' +
      // one topic: id, partitions [1], one tagged field (tag 0, 5 bytes: the epochs [3]), then no partitions pending, no tags
      '02' + TOPIC + '02' + '00000001' + '01' + '00' + '05' + '02' + '00000003' + '01' + '00');
  });

  it('read back every kind as written, tombstones included', () => {
    const records: ConsumerGroupRecord[] = [
      { kind: 'groupEpoch', groupId: 'g', value: { epoch: 7, metadataHash: -5n } },
      {
        kind: 'member', groupId: 'g', memberId: 'm', value: {
          instanceId: 'i', rackId: null, clientId: 'c', clientHost: '/1.2.3.4', subscribedTopicNames: ['a', 'b'],
          subscribedTopicRegex: 'x.*', rebalanceTimeoutMs: 30000, serverAssignor: 'range', classic: null,
        },
      },
      {
        kind: 'member', groupId: 'g', memberId: 'classic', value: {
          instanceId: null, rackId: 'r1', clientId: 'c', clientHost: '/1.2.3.4', subscribedTopicNames: ['a'],
          subscribedTopicRegex: '', rebalanceTimeoutMs: 30000, serverAssignor: null,
          classic: { sessionTimeoutMs: 10000, protocols: [{ name: 'range', metadata: Buffer.from('sub') }] },
        },
      },
      { kind: 'targetEpoch', groupId: 'g', value: { assignmentEpoch: 7, assignmentTimestamp: 1234 } },
      { kind: 'targetMember', groupId: 'g', memberId: 'm', value: new Map([[TOPIC, new Set([0, 2])]]) },
      {
        kind: 'currentAssignment', groupId: 'g', memberId: 'm', value: {
          memberEpoch: 7, previousMemberEpoch: 6, state: MemberState.Stable,
          assigned: new Map([[TOPIC, new Map([[0, 6], [2, 7]])]]), pendingRevocation: new Map(),
        },
      },
      { kind: 'regex', groupId: 'g', regex: 'x.*', value: { topics: ['xa', 'xb'], version: 0, timestamp: 99 } },
      { kind: 'member', groupId: 'g', memberId: 'm', value: null },
      { kind: 'currentAssignment', groupId: 'g', memberId: 'm', value: null },
    ];
    for (const r of records) {
      const { key, value } = encodeConsumerGroupRecord(r);
      expect(decodeConsumerGroupRecord(key, value), r.kind).to.deep.equal(r);
    }
  });

  it('skip the partition metadata records Kafka 4.1 stopped writing, and refuse unknown value versions', () => {
    expect(decodeConsumerGroupRecord(Buffer.from('00040001' + '67', 'hex'), Buffer.from('000000', 'hex'))).to.equal(null);
    const { key } = encodeConsumerGroupRecord({ kind: 'groupEpoch', groupId: 'g', value: null });
    expect(() => decodeConsumerGroupRecord(key, Buffer.from('0001' + '00000005' + '00', 'hex'))).to.throw(/version 1/);
  });
});
