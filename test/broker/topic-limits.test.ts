// Partition caps as Kafka's controller has them (ReplicationControlManager.MAX_PARTITIONS_PER_BATCH):
// one CreateTopics or CreatePartitions asking for more than 10,000 partitions in all is refused at once
// with POLICY_VIOLATION for every topic, validateOnly or not, and nothing is created. Internal topics do
// not grow.
import { expect } from 'chai';
import { ApiKey } from '../../src/protocol/generated';
import type { CreateTopicsResponse } from '../../src/protocol/generated/CreateTopicsResponse';
import type { CreatePartitionsResponse } from '../../src/protocol/generated/CreatePartitionsResponse';
import { ErrorCode } from '../../src/common/errors';
import { RawClient } from '../helpers/raw-client';
import { withBroker } from '../helpers/broker';

const TOO_MANY = 'Excessively large number of partitions per request.';
const INT32_MAX = 2147483647;

describe('topic limits: partitions per request, internal topics', function () {
  this.timeout(20000);
  const broker = withBroker({ config: { 'num.partitions': '2' } });
  let c: RawClient;
  before(async () => { c = await RawClient.connect(broker.current().port); });
  after(() => c.close());

  const topic = (name: string, numPartitions: number, assignments: { partitionIndex: number; brokerIds: number[] }[] = []) =>
    ({ name, numPartitions, replicationFactor: assignments.length > 0 ? -1 : 1, assignments, configs: [] });
  const createTopics = (version: number, topics: ReturnType<typeof topic>[], validateOnly = false) =>
    c.request<CreateTopicsResponse>(ApiKey.CreateTopics, version, { topics, timeoutMs: 1000, validateOnly });
  const createPartitions = (version: number, topics: { name: string; count: number }[], validateOnly = false) =>
    c.request<CreatePartitionsResponse>(ApiKey.CreatePartitions, version, {
      topics: topics.map((t) => ({ ...t, assignments: null })), timeoutMs: 1000, validateOnly,
    });

  it('CreateTopics numPartitions=2147483647 is POLICY_VIOLATION at once, at every version, validateOnly or not', async () => {
    for (let v = 0; v <= 7; v++) {
      for (const validateOnly of v >= 1 ? [false, true] : [false]) {
        const started = Date.now();
        const res = await createTopics(v, [topic('huge', INT32_MAX)], validateOnly);
        expect(Date.now() - started, `v${v}`).to.be.below(1000);
        expect(res.topics).to.have.length(1);
        expect(res.topics[0]).to.include({ name: 'huge', errorCode: ErrorCode.POLICY_VIOLATION });
        // errorMessage is in the response from v1 (the decoder fills in '' before).
        if (v >= 1) expect(res.topics[0].errorMessage, `v${v}`).to.equal(TOO_MANY);
      }
    }
    expect(broker.current().broker.controller.topic('huge')).to.equal(undefined);
  });

  it('counts as Kafka does: num.partitions for -1, assignments when given, duplicates left out; 10,000 is allowed', async () => {
    const refused = async (topics: ReturnType<typeof topic>[]) => {
      const res = await createTopics(7, topics, true);
      return res.topics.map((t) => t.errorCode);
    };
    // 9,999 + num.partitions (2) = 10,001.
    expect(await refused([topic('a', 9999), topic('b', -1)])).to.deep.equal([ErrorCode.POLICY_VIOLATION, ErrorCode.POLICY_VIOLATION]);
    // 9,998 + 2 = 10,000: the cap itself is allowed.
    expect(await refused([topic('a', 9998), topic('b', -1)])).to.deep.equal([ErrorCode.NONE, ErrorCode.NONE]);
    // 10,001 assignments.
    const assignments = Array.from({ length: 10001 }, (_, i) => ({ partitionIndex: i, brokerIds: [0] }));
    expect(await refused([topic('assigned', -1, assignments)])).to.deep.equal([ErrorCode.POLICY_VIOLATION]);
    // A duplicated name is answered INVALID_REQUEST and not counted; over the cap it is listed too.
    expect(await refused([topic('d', 6000), topic('d', 6000)])).to.deep.equal([ErrorCode.INVALID_REQUEST, ErrorCode.INVALID_REQUEST]);
    expect(await refused([topic('d', 6000), topic('d', 6000), topic('e', 10001)])).to.deep.equal(
      [ErrorCode.POLICY_VIOLATION, ErrorCode.POLICY_VIOLATION, ErrorCode.POLICY_VIOLATION]);
    // Zero and negative counts add nothing (they fail on their own).
    expect(await refused([topic('zero', 0), topic('neg', -5), topic('ok', 10000)])).to.deep.equal(
      [ErrorCode.INVALID_PARTITIONS, ErrorCode.INVALID_PARTITIONS, ErrorCode.NONE]);
  });

  it('CreatePartitions adding more than 10,000 in all is POLICY_VIOLATION, at every version, and nothing grows', async () => {
    const made = await createTopics(7, [topic('grow-a', 1), topic('grow-b', 1)]);
    expect(made.topics.map((t) => t.errorCode)).to.deep.equal([ErrorCode.NONE, ErrorCode.NONE]);
    for (let v = 0; v <= 3; v++) {
      for (const validateOnly of [false, true]) {
        const huge = await createPartitions(v, [{ name: 'grow-a', count: INT32_MAX }], validateOnly);
        expect(huge.results[0]).to.include({ name: 'grow-a', errorCode: ErrorCode.POLICY_VIOLATION, errorMessage: TOO_MANY });
        const split = await createPartitions(v, [{ name: 'grow-a', count: 5001 }, { name: 'grow-b', count: 5002 }], validateOnly);
        expect(split.results.map((r) => r.errorCode), `v${v}`).to.deep.equal([ErrorCode.POLICY_VIOLATION, ErrorCode.POLICY_VIOLATION]);
      }
    }
    const controller = broker.current().broker.controller;
    expect([controller.topic('grow-a')!.partitions.length, controller.topic('grow-b')!.partitions.length]).to.deep.equal([1, 1]);
    // 10,000 added in all is within the cap (validated only: creating them would take a while).
    const atCap = await createPartitions(3, [{ name: 'grow-a', count: 5001 }, { name: 'grow-b', count: 5001 }], true);
    expect(atCap.results.map((r) => r.errorCode)).to.deep.equal([ErrorCode.NONE, ErrorCode.NONE]);
  });

  it('internal topics do not grow: POLICY_VIOLATION, validateOnly or not', async () => {
    const controller = broker.current().broker.controller;
    const before = controller.topic('__consumer_offsets')!.partitions.length;
    for (const validateOnly of [false, true]) {
      const res = await createPartitions(3, [{ name: '__consumer_offsets', count: before + 1 }], validateOnly);
      expect(res.results[0].errorCode).to.equal(ErrorCode.POLICY_VIOLATION);
      expect(res.results[0].errorMessage).to.match(/^Cannot add partitions to the internal topic __consumer_offsets/);
    }
    expect(controller.topic('__consumer_offsets')!.partitions.length).to.equal(before);
  });
});
