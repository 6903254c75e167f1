import { expect } from 'chai';
import { FetchSessionCache, type FetchPartitionRequest, type PartitionAnswer } from '../../src/replica/fetch-sessions';
import { ErrorCode } from '../../src/common/errors';

const part = (partition: number, fetchOffset = 0): FetchPartitionRequest => ({
  topic: 't', topicId: 'a'.repeat(32), partition, fetchOffset, logStartOffset: -1, maxBytes: 1 << 20, currentLeaderEpoch: -1, lastFetchedEpoch: -1,
});
const answer = (over: Partial<PartitionAnswer> = {}): PartitionAnswer => ({
  errorCode: ErrorCode.NONE, highWatermark: 10, lastStableOffset: 10, logStartOffset: 0, hasRecords: false, ...over,
});

describe('fetch sessions (KIP-227)', () => {
  let now = 0;
  const cache = (slots = 10) => new FetchSessionCache(slots, 1000, () => now);

  it('opens a session on epoch 0 and answers every partition of a full fetch', () => {
    const c = cache();
    const ctx = c.newContext(0, 0, false, [part(0), part(1)], []);
    expect(ctx.sessionId).to.not.equal(0);
    expect(ctx.partitions.map((p) => p.partition)).to.deep.equal([0, 1]);
    expect(ctx.partitions.every((p) => ctx.include(p, answer()))).to.equal(true);
    expect(c.size).to.equal(1);
  });

  it('answers only changed partitions in an incremental fetch, and keeps unmentioned partitions', () => {
    const c = cache();
    const full = c.newContext(0, 0, false, [part(0), part(1), part(2)], []);
    for (const p of full.partitions) full.include(p, answer());
    const inc = c.newContext(full.sessionId, 1, false, [part(1, 5)], []);
    expect(inc.errorCode).to.equal(ErrorCode.NONE);
    expect(inc.partitions.map((p) => [p.partition, p.fetchOffset])).to.deep.equal([[0, 0], [1, 5], [2, 0]]);
    const included = inc.partitions.filter((p) =>
      inc.include(p, p.partition === 1 ? answer({ hasRecords: true }) : p.partition === 2 ? answer({ highWatermark: 11 }) : answer()));
    expect(included.map((p) => p.partition)).to.deep.equal([1, 2]);
    // An error is always answered; once it clears the partition is answered again.
    const withError = c.newContext(full.sessionId, 2, false, [], []);
    expect(withError.include(part(0), answer({ errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER }))).to.equal(true);
    const cleared = c.newContext(full.sessionId, 3, false, [], []);
    expect(cleared.include(part(0), answer())).to.equal(true);
    const quiet = c.newContext(full.sessionId, 4, false, [], []);
    expect(quiet.include(part(0), answer())).to.equal(false);
  });

  it('drops forgotten partitions and closes a session left empty', () => {
    const c = cache();
    const full = c.newContext(0, 0, false, [part(0), part(1)], []);
    const inc = c.newContext(full.sessionId, 1, false, [], ['t:0']);
    expect(inc.partitions.map((p) => p.partition)).to.deep.equal([1]);
    const emptied = c.newContext(full.sessionId, 2, false, [], ['t:1']);
    expect(emptied.sessionId).to.equal(0);
    expect(c.size).to.equal(0);
  });

  it('rejects unknown sessions, wrong epochs and a change of topic-id use', () => {
    const c = cache();
    expect(c.newContext(12345, 1, false, [], []).errorCode).to.equal(ErrorCode.FETCH_SESSION_ID_NOT_FOUND);
    const full = c.newContext(0, 0, false, [part(0)], []);
    expect(c.newContext(full.sessionId, 5, false, [], []).errorCode).to.equal(ErrorCode.INVALID_FETCH_SESSION_EPOCH);
    expect(c.newContext(full.sessionId, 1, true, [], []).errorCode).to.equal(ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR);
  });

  it('closes a session on epoch -1 and fetches without one', () => {
    const c = cache();
    const full = c.newContext(0, 0, false, [part(0)], []);
    const closing = c.newContext(full.sessionId, -1, false, [part(0)], []);
    expect(closing.sessionId).to.equal(0);
    expect(c.size).to.equal(0);
  });

  it('evicts the least recently used session only after the minimum idle time', () => {
    const c = cache(1);
    now = 0;
    const first = c.newContext(0, 0, false, [part(0)], []);
    now = 500;
    expect(c.newContext(0, 0, false, [part(0)], []).sessionId, 'cache full, first too young').to.equal(0);
    now = 1500;
    const second = c.newContext(0, 0, false, [part(0)], []);
    expect(second.sessionId).to.not.equal(0).and.not.equal(first.sessionId);
    expect(c.newContext(first.sessionId, 1, false, [], []).errorCode).to.equal(ErrorCode.FETCH_SESSION_ID_NOT_FOUND);
  });
});
