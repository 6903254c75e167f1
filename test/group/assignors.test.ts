// The consumer group assignors (src/group/assignors.ts).
import { expect } from 'chai';
import { rangeAssignor, uniformAssignor, type AssignmentMember, type AssignmentSpec } from '../../src/group/assignors';
import type { TopicPartitions } from '../../src/group/consumer-member';

const member = (memberId: string, topics: string[], instanceId: string | null = null): AssignmentMember =>
  ({ memberId, instanceId, subscribedTopicIds: new Set(topics) });

/** Each member's partitions as "topic-partition", sorted. */
function flat(assignment: Map<string, TopicPartitions>): Record<string, string[]> {
  return Object.fromEntries([...assignment].map(([id, tp]) => [id, [...tp].flatMap(([t, ps]) => [...ps].map((p) => `${t}-${p}`)).sort()]));
}

function counts(assignment: Map<string, TopicPartitions>): number[] {
  return Object.values(flat(assignment)).map((ps) => ps.length);
}

/** Every partition of the spec's topics subscribed by someone is assigned exactly once, to a subscriber. */
function expectComplete(spec: AssignmentSpec, assignment: Map<string, TopicPartitions>): void {
  const owners = new Map<string, string>();
  for (const [memberId, tp] of assignment) {
    for (const [t, ps] of tp) {
      expect(spec.members.find((m) => m.memberId === memberId)!.subscribedTopicIds.has(t)).to.equal(true);
      for (const p of ps) {
        expect(owners.has(`${t}-${p}`), `${t}-${p} twice`).to.equal(false);
        owners.set(`${t}-${p}`, memberId);
      }
    }
  }
  for (const [t, n] of spec.topics) {
    if (!spec.members.some((m) => m.subscribedTopicIds.has(t))) continue;
    for (let p = 0; p < n; p++) expect(owners.has(`${t}-${p}`), `${t}-${p} unassigned`).to.equal(true);
  }
}

describe('uniform assignor', () => {
  it('balances a homogeneous group to within one partition', () => {
    const spec: AssignmentSpec = {
      members: [member('a', ['x', 'y']), member('b', ['x', 'y']), member('c', ['x', 'y'])],
      topics: new Map([['x', 5], ['y', 3]]), previous: new Map(),
    };
    const result = uniformAssignor.assign(spec);
    expectComplete(spec, result);
    expect(counts(result).sort()).to.deep.equal([2, 3, 3]);
  });

  it('is sticky: a member joining takes partitions only from the overloaded, the others keep theirs', () => {
    const topics = new Map([['x', 6]]);
    const first = uniformAssignor.assign({ members: [member('a', ['x']), member('b', ['x'])], topics, previous: new Map() });
    const second = uniformAssignor.assign({ members: [member('a', ['x']), member('b', ['x']), member('c', ['x'])], topics, previous: first });
    expect(counts(second)).to.deep.equal([2, 2, 2]);
    const before = flat(first);
    const after = flat(second);
    for (const id of ['a', 'b']) expect(before[id]).to.include.members(after[id]);
  });

  it('gives each topic only to its subscribers, as evenly as the subscriptions allow', () => {
    const spec: AssignmentSpec = {
      members: [member('a', ['x']), member('b', ['x', 'y']), member('c', ['y'])],
      topics: new Map([['x', 4], ['y', 4]]), previous: new Map(),
    };
    const result = uniformAssignor.assign(spec);
    expectComplete(spec, result);
    expect(Math.max(...counts(result)) - Math.min(...counts(result))).to.be.at.most(1);
  });

  it('drops partitions of topics no longer subscribed and of partitions gone', () => {
    const previous = new Map([['a', new Map([['x', new Set([0, 1, 2, 3])], ['y', new Set([0])]])]]);
    const result = uniformAssignor.assign({ members: [member('a', ['x'])], topics: new Map([['x', 2]]), previous });
    expect(flat(result)).to.deep.equal({ a: ['x-0', 'x-1'] });
  });
});

describe('range assignor', () => {
  it('gives each member a range of each topic it subscribes to, the first ones one more', () => {
    const spec: AssignmentSpec = {
      members: [member('m2', ['x', 'y']), member('m1', ['x', 'y']), member('m3', ['x'])],
      topics: new Map([['x', 7], ['y', 3]]), previous: new Map(),
    };
    const result = rangeAssignor.assign(spec);
    expectComplete(spec, result);
    expect(flat(result)).to.deep.equal({
      m1: ['x-0', 'x-1', 'x-2', 'y-0', 'y-1'],
      m2: ['x-3', 'x-4', 'y-2'],
      m3: ['x-5', 'x-6'],
    });
  });

  it('orders members by instance id when they have one', () => {
    const result = rangeAssignor.assign({
      members: [member('a', ['x'], 'i2'), member('b', ['x'], 'i1')], topics: new Map([['x', 2]]), previous: new Map(),
    });
    expect(flat(result)).to.deep.equal({ a: ['x-1'], b: ['x-0'] });
  });
});
