// CreateTopics, CreatePartitions and DeleteTopics at every version they serve, with the fields that can
// be null, empty or contradictory: every request is answered (the connection stays open) with Kafka's
// codes, as ControllerApis and ReplicationControlManager give them.
import { expect } from 'chai';
import { ApiKey } from '../../src/protocol/generated';
import type { CreateTopicsResponse } from '../../src/protocol/generated/CreateTopicsResponse';
import type { CreatePartitionsResponse } from '../../src/protocol/generated/CreatePartitionsResponse';
import type { DeleteTopicsResponse } from '../../src/protocol/generated/DeleteTopicsResponse';
import { ErrorCode } from '../../src/common/errors';
import { RawClient } from '../helpers/raw-client';
import { withBroker } from '../helpers/broker';

const ZERO = '0'.repeat(32);

describe('topic administration at every version: null, empty and contradictory fields', function () {
  this.timeout(20000);
  const broker = withBroker();
  let c: RawClient;
  before(async () => { c = await RawClient.connect(broker.current().port); });
  after(() => c.close());

  const newTopic = (name: string, extra: object = {}) => ({ name, numPartitions: 1, replicationFactor: 1, assignments: [], configs: [], ...extra });
  const create = (version: number, topics: object[]) =>
    c.request<CreateTopicsResponse>(ApiKey.CreateTopics, version, { topics, timeoutMs: 1000, validateOnly: false });
  const deleteNames = (version: number, topicNames: string[]) =>
    c.request<DeleteTopicsResponse>(ApiKey.DeleteTopics, version, { topicNames, timeoutMs: 1000 });
  const answers = (res: DeleteTopicsResponse) => res.responses.map((r) => [r.name, r.errorCode]);

  it('CreateTopics v0-7: empty list, null config value, empty assignment, duplicate, bad name', async () => {
    for (let v = 0; v <= 7; v++) {
      expect((await create(v, [])).topics, `v${v}`).to.deep.equal([]);
      const res = await create(v, [
        newTopic(`ok-${v}`),
        newTopic(`nullcfg-${v}`, { configs: [{ name: 'retention.ms', value: null }] }),
        newTopic(`emptyreplicas-${v}`, { numPartitions: -1, replicationFactor: -1, assignments: [{ partitionIndex: 0, brokerIds: [] }] }),
        newTopic(`dup-${v}`), newTopic(`dup-${v}`),
        newTopic(''),
      ]);
      expect(res.topics.map((t) => t.errorCode), `v${v}`).to.deep.equal([
        ErrorCode.NONE, ErrorCode.INVALID_CONFIG, ErrorCode.INVALID_REPLICA_ASSIGNMENT,
        ErrorCode.INVALID_REQUEST, ErrorCode.INVALID_REQUEST, ErrorCode.INVALID_TOPIC_EXCEPTION,
      ]);
      if (v >= 5) expect(res.topics[0].numPartitions).to.equal(1);
      if (v >= 7) expect(res.topics[0].topicId).to.match(/^[0-9a-f]{32}$/).and.not.equal(ZERO);
    }
    expect(c.ended).to.equal(false);
  });

  it('CreatePartitions v0-3: null and empty assignments, an empty replica list, an unknown topic', async () => {
    for (let v = 0; v <= 3; v++) {
      expect((await create(7, [newTopic(`cp-${v}`)])).topics[0].errorCode).to.equal(ErrorCode.NONE);
      const res = await c.request<CreatePartitionsResponse>(ApiKey.CreatePartitions, v, {
        topics: [
          { name: `cp-${v}`, count: 2, assignments: [] },
          { name: `cp-${v}`, count: 2, assignments: null },
        ], timeoutMs: 1000, validateOnly: false,
      });
      expect(res.results.map((r) => r.errorCode), `v${v} duplicate`).to.deep.equal([ErrorCode.INVALID_REQUEST, ErrorCode.INVALID_REQUEST]);
      const each = async (t: object) => (await c.request<CreatePartitionsResponse>(ApiKey.CreatePartitions, v, { topics: [t], timeoutMs: 1000, validateOnly: false })).results[0];
      expect(await each({ name: `cp-${v}`, count: 2, assignments: [] })).to.include({
        errorCode: ErrorCode.INVALID_REPLICA_ASSIGNMENT, errorMessage: 'Attempted to add 1 additional partition(s), but only 0 assignment(s) were specified.',
      });
      expect(await each({ name: `cp-${v}`, count: 2, assignments: [{ brokerIds: [] }] })).to.include({ errorCode: ErrorCode.INVALID_REPLICA_ASSIGNMENT });
      expect(await each({ name: 'no-such', count: 2, assignments: null })).to.include({ errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION });
      expect(await each({ name: `cp-${v}`, count: 0, assignments: null })).to.include({
        errorCode: ErrorCode.INVALID_PARTITIONS, errorMessage: `The topic cp-${v} currently has 1 partition(s); 0 would not be an increase.`,
      });
      expect(await each({ name: `cp-${v}`, count: 2, assignments: null })).to.include({ errorCode: ErrorCode.NONE, errorMessage: null });
    }
    expect(c.ended).to.equal(false);
  });

  it('DeleteTopics v0-5: an empty list, unknown names, a name given twice (answered once, not deleted)', async () => {
    for (let v = 0; v <= 5; v++) {
      expect((await deleteNames(v, [])).responses, `v${v}`).to.deep.equal([]);
      expect((await create(7, [newTopic(`del-${v}`), newTopic(`twice-${v}`)])).topics.map((t) => t.errorCode)).to.deep.equal([0, 0]);
      const res = await deleteNames(v, [`del-${v}`, 'missing', `twice-${v}`, `twice-${v}`]);
      expect(answers(res), `v${v}`).to.deep.equal([
        [`del-${v}`, ErrorCode.NONE], ['missing', ErrorCode.UNKNOWN_TOPIC_OR_PARTITION], [`twice-${v}`, ErrorCode.INVALID_REQUEST],
      ]);
      if (v >= 5) expect(res.responses[2].errorMessage).to.equal('Duplicate topic name.');
      expect(broker.current().broker.controller.topic(`twice-${v}`), `v${v}: not deleted`).to.not.equal(undefined);
    }
  });

  it('DeleteTopics v6: neither name nor id, both, unknown and repeated ids, a name that maps to a given id', async () => {
    const made = await create(7, [newTopic('six-a'), newTopic('six-b'), newTopic('six-c')]);
    const [a, b, cId] = made.topics.map((t) => t.topicId!);
    const res = await c.request<DeleteTopicsResponse>(ApiKey.DeleteTopics, 6, {
      topics: [
        { name: null, topicId: ZERO },
        { name: 'six-a', topicId: a },
        { name: null, topicId: '5'.repeat(32) },
        { name: null, topicId: b }, { name: null, topicId: b },
        { name: null, topicId: cId }, { name: 'six-c', topicId: ZERO },
      ],
      timeoutMs: 1000,
    });
    expect(res.responses.map((r) => [r.name, r.topicId, r.errorCode, r.errorMessage])).to.deep.equal([
      [null, ZERO, ErrorCode.INVALID_REQUEST, 'Neither topic name nor id were specified.'],
      ['six-a', a, ErrorCode.INVALID_REQUEST, 'You may not specify both topic name and topic id.'],
      [null, '5'.repeat(32), ErrorCode.UNKNOWN_TOPIC_ID, 'This server does not host this topic ID.'],
      [null, b, ErrorCode.INVALID_REQUEST, 'Duplicate topic id.'],
      ['six-c', cId, ErrorCode.INVALID_REQUEST, 'The provided topic name maps to an ID that was already supplied.'],
    ]);
    const controller = broker.current().broker.controller;
    expect(['six-a', 'six-b', 'six-c'].map((n) => controller.topic(n) !== undefined)).to.deep.equal([true, true, true]);
    // By id alone, it goes, and the answer names it.
    const byId = await c.request<DeleteTopicsResponse>(ApiKey.DeleteTopics, 6, { topics: [{ name: null, topicId: a }], timeoutMs: 1000 });
    expect(byId.responses.map((r) => [r.name, r.topicId, r.errorCode])).to.deep.equal([['six-a', a, ErrorCode.NONE]]);
  });

  describe('with delete.topic.enable=false', () => {
    const locked = withBroker({ config: { 'delete.topic.enable': 'false' } });
    it('answers TOPIC_DELETION_DISABLED from v3, INVALID_REQUEST before (as Kafka), and deletes nothing', async () => {
      const l = await RawClient.connect(locked.current().port);
      const made = await l.request<CreateTopicsResponse>(ApiKey.CreateTopics, 7, { topics: [newTopic('kept')], timeoutMs: 1000, validateOnly: false });
      expect(made.topics[0].errorCode).to.equal(ErrorCode.NONE);
      for (let v = 0; v <= 5; v++) {
        const res = await l.request<DeleteTopicsResponse>(ApiKey.DeleteTopics, v, { topicNames: ['kept'], timeoutMs: 1000 });
        expect(res.responses[0].errorCode, `v${v}`).to.equal(v >= 3 ? ErrorCode.TOPIC_DELETION_DISABLED : ErrorCode.INVALID_REQUEST);
      }
      expect(locked.current().broker.controller.topic('kept')).to.not.equal(undefined);
      l.close();
    });
  });
});
