// The follower side (src/replica/replica-fetcher*.ts): a ReplicaFetcherManager fetching into a real
// follower PartitionLog from a fake leader answered from a real leader PartitionLog (fake-leader.ts).
import { expect } from 'chai';
import { Writable } from 'stream';
import { createLogger, type Logger } from '../../src/common/logger';
import { ApiKey, apiSpecs } from '../../src/protocol/generated';
import { Reader, Writer } from '../../src/protocol/primitives';
import { ErrorCode } from '../../src/common/errors';
import { fetcherIdOf, ReplicaFetcherManager } from '../../src/replica/replica-fetcher-manager';
import type { FollowerPartition, LeaderConnection } from '../../src/replica/replica-fetcher';
import { buildFetchRequest, wholeBatches } from '../../src/replica/replica-fetcher-requests';
import { StorageError } from '../../src/storage/errors';
import { PartitionLog } from '../../src/storage/partition-log';
import { concatBatches, partitionLogs, silentLogger } from '../storage/helpers';
import { fetchFrom, leaderAppend, logBytes } from '../storage/replication-helpers';
import { FakeLeader } from './fake-leader';

const TOPIC_ID = '0123456789abcdef0123456789abcdef';
const LEADER = 1;
const FOLLOWER = 2;
/** Fetch v18's HighWatermark when the follower does not send one: int64 max. */
const UNKNOWN_HIGH_WATERMARK = (1n << 63n) - 1n;

async function until(what: string, condition: () => boolean, timeoutMs = 8000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('replica/replica fetcher (the follower side)', function () {
  this.timeout(20000);
  const logs = partitionLogs('fjord-fetcher-', 2000);
  const openLog = logs.open;
  const managers: ReplicaFetcherManager[] = [];

  afterEach(async () => {
    for (const m of managers.splice(0)) await m.close();
  });

  /** A manager fetching from `leader` (or from leaders by id), recording the high watermarks it reports. */
  function follow(leader: FakeLeader | ((leaderId: number) => Promise<LeaderConnection>), extra: { fetchMaxBytes?: number; logger?: Logger } = {}) {
    const highWatermarks: number[] = [];
    const manager = new ReplicaFetcherManager({
      brokerId: FOLLOWER, brokerEpoch: 7n, connect: leader instanceof FakeLeader ? leader.connect : leader, logger: extra.logger ?? silentLogger,
      config: { numReplicaFetchers: 1, fetchWaitMaxMs: 20, fetchMinBytes: 1, fetchResponseMaxBytes: 1 << 20, fetchMaxBytes: extra.fetchMaxBytes ?? 1 << 20, fetchBackoffMs: 30 },
      onHighWatermark: (_topic, _partition, hw) => highWatermarks.push(hw),
    });
    managers.push(manager);
    return { manager, highWatermarks };
  }

  const partitionOf = (log: PartitionLog, leaderEpoch: number, highWatermark?: number): FollowerPartition =>
    ({ topic: 't', partition: 0, topicId: TOPIC_ID, leaderEpoch, log, highWatermark });

  /** Two logs that diverged (follower-truncation.test.ts): A led epoch 0 (0-4, fetched by B), B wrote 5-9 in epoch 1, A leads epoch 2. */
  async function diverged(): Promise<{ a: PartitionLog; b: PartitionLog }> {
    const a = await openLog();
    const b = await openLog();
    leaderAppend(a, { records: 2, epoch: 0, producerId: 7, sequence: 0 });
    await leaderAppend(a, { records: 3, epoch: 0 }).done;
    await fetchFrom(a, b);
    leaderAppend(b, { records: 2, epoch: 1, producerId: 7, sequence: 2, tag: 'lost' });
    await leaderAppend(b, { records: 3, epoch: 1, tag: 'lost' }).done;
    leaderAppend(a, { records: 2, epoch: 2, producerId: 7, sequence: 2, tag: 'kept' });
    await leaderAppend(a, { records: 4, epoch: 2, tag: 'kept' }).done;
    return { a, b };
  }

  it('replicates batches byte-identical, one write at a time, with the replica\'s Fetch fields', async () => {
    const leaderLog = await openLog();
    for (let i = 0; i < 12; i++) leaderAppend(leaderLog, { records: 3, epoch: 0, producerId: 9, sequence: 3 * i });
    await leaderAppend(leaderLog, { records: 1, epoch: 0 }).done;
    const follower = await openLog();
    const leader = new FakeLeader('t', TOPIC_ID, leaderLog, 0);
    // At each Fetch the follower's previous write is done (its written end is its log end) and asked for.
    const notWritten: number[] = [];
    leader.onFetch = (fetchOffset) => {
      if (fetchOffset !== follower.logEndOffset || follower.highWatermark !== follower.logEndOffset) notWritten.push(fetchOffset);
    };
    const { manager, highWatermarks } = follow(leader, { fetchMaxBytes: 300 });
    manager.addPartitions(LEADER, [partitionOf(follower, 0)]);

    await until('the follower to catch up', () => manager.followerHighWatermark('t', 0) === leaderLog.logEndOffset);
    expect(follower.logEndOffset).to.equal(37);
    expect(await logBytes(follower)).to.deep.equal(await logBytes(leaderLog));
    expect(follower.producerState.lastEntry(9)).to.deep.equal(leaderLog.producerState.lastEntry(9));
    expect(notWritten).to.deep.equal([]);
    expect(highWatermarks.at(-1)).to.equal(37);
    expect(highWatermarks).to.deep.equal([...highWatermarks].sort((x, y) => x - y));

    const fetches = leader.fetches();
    expect(fetches.length).to.be.greaterThan(3); // 300 bytes a fetch: several rounds
    expect(fetches[0]).to.deep.include({ replicaState: { replicaId: FOLLOWER, replicaEpoch: 7n }, maxWaitMs: 20, minBytes: 1, maxBytes: 1 << 20, isolationLevel: 0 });
    expect(fetches[0].topics[0].topicId).to.equal(TOPIC_ID);
    expect(fetches[0].topics[0].partitions[0]).to.deep.include({ partition: 0, currentLeaderEpoch: 0, fetchOffset: 0n, lastFetchedEpoch: -1, partitionMaxBytes: 300 });
    expect(fetches[1].topics[0].partitions[0].lastFetchedEpoch).to.equal(0);
    const offsets = fetches.map((f) => Number(f.topics[0].partitions[0].fetchOffset));
    expect(offsets).to.deep.equal([...offsets].sort((x, y) => x - y));
  });

  it('below Fetch v13/v15: topic names and the replicaId field', async () => {
    const leaderLog = await openLog();
    await leaderAppend(leaderLog, { records: 2, epoch: 0 }).done;
    const follower = await openLog();
    const leader = new FakeLeader('t', TOPIC_ID, leaderLog, 0, { fetchVersion: 12 });
    const { manager } = follow(leader);
    manager.addPartitions(LEADER, [partitionOf(follower, 0)]);
    await until('the follower to catch up', () => manager.followerHighWatermark('t', 0) === 2);
    const fetch = leader.fetches()[0];
    expect(fetch.replicaId).to.equal(FOLLOWER);
    expect(fetch.replicaState).to.equal(undefined);
    expect(fetch.topics[0]).to.deep.include({ topic: 't' });
  });

  it('a divergent tail is cut at the leader\'s divergingEpoch (KIP-320), then the logs are identical', async () => {
    const { a, b } = await diverged();
    const leader = new FakeLeader('t', TOPIC_ID, a, 2);
    const { manager, highWatermarks } = follow(leader);
    manager.addPartitions(LEADER, [partitionOf(b, 2, 5)]);
    await until('the follower to catch up', () => manager.followerHighWatermark('t', 0) === a.logEndOffset);

    expect(leader.requests.map((r) => r.apiKey)).to.not.include(ApiKey.OffsetForLeaderEpoch);
    const first = leader.fetches()[0].topics[0].partitions[0];
    expect([first.fetchOffset, first.lastFetchedEpoch]).to.deep.equal([10n, 1]);
    expect(leader.fetchAnswers[0].divergingEpoch).to.deep.equal({ epoch: 0, endOffset: 5n });
    expect(Number(leader.fetches()[1].topics[0].partitions[0].fetchOffset)).to.equal(5);
    expect(await logBytes(b)).to.deep.equal(await logBytes(a));
    expect(b.leaderEpochEntries()).to.deep.equal([{ epoch: 0, startOffset: 0 }, { epoch: 2, startOffset: 5 }]);
    expect(b.producerState.lastEntry(7)).to.deep.equal(a.producerState.lastEntry(7));
    expect(highWatermarks).to.deep.equal([11]); // none while the divergent tail was there
  });

  it('a leader below Fetch v12: OffsetForLeaderEpoch first, then the same cut', async () => {
    const { a, b } = await diverged();
    const leader = new FakeLeader('t', TOPIC_ID, a, 2, { fetchVersion: 11 });
    const { manager } = follow(leader);
    manager.addPartitions(LEADER, [partitionOf(b, 2, 5)]);
    await until('the follower to catch up', () => manager.followerHighWatermark('t', 0) === a.logEndOffset);

    expect(leader.requests[0].apiKey).to.equal(ApiKey.OffsetForLeaderEpoch);
    expect(leader.requests[0].body).to.deep.equal({ replicaId: FOLLOWER, topics: [{ topic: 't', partitions: [{ partition: 0, currentLeaderEpoch: 2, leaderEpoch: 1 }] }] });
    expect(leader.fetches()[0].topics[0].partitions[0]).to.deep.include({ fetchOffset: 5n, lastFetchedEpoch: -1 });
    expect(await logBytes(b)).to.deep.equal(await logBytes(a));
    expect(b.producerState.lastEntry(7)).to.deep.equal(a.producerState.lastEntry(7));
  });

  it('OFFSET_OUT_OF_RANGE below the leader\'s log start: the log is emptied and starts at the leader\'s', async () => {
    const leaderLog = await openLog();
    for (let i = 0; i < 9; i++) leaderAppend(leaderLog, { records: 1, epoch: 0 });
    await leaderAppend(leaderLog, { records: 1, epoch: 0 }).done;
    const follower = await openLog();
    while (follower.logEndOffset < 3) await follower.appendAsFollower(await logBytes(leaderLog, follower.logEndOffset, 1)).done;
    expect(await leaderLog.deleteRecordsBefore(6)).to.equal(6);
    const leader = new FakeLeader('t', TOPIC_ID, leaderLog, 0);
    const { manager } = follow(leader);
    manager.addPartitions(LEADER, [partitionOf(follower, 0, 3)]);
    await until('the follower to catch up', () => manager.followerHighWatermark('t', 0) === 10);

    expect(leader.fetchAnswers[0].errorCode).to.equal(ErrorCode.OFFSET_OUT_OF_RANGE);
    expect(leader.requests.filter((r) => r.apiKey === ApiKey.ListOffsets).map((r) => (r.body as { topics: Array<{ partitions: Array<{ timestamp: bigint }> }> }).topics[0].partitions[0].timestamp))
      .to.deep.equal([-1n, -2n]);
    await until('the log start to follow the leader\'s', () => follower.logStartOffset === 6);
    expect(follower.logEndOffset).to.equal(10);
    expect(await logBytes(follower, 6)).to.deep.equal(await logBytes(leaderLog, 6));
  });

  it('a leader without OffsetForLeaderEpoch: the follower cuts to its high watermark; OFFSET_OUT_OF_RANGE past the leader\'s end cuts to it', async () => {
    const leaderLog = await openLog();
    await leaderAppend(leaderLog, { records: 5, epoch: 0 }).done;
    const follower = await openLog();
    await fetchFrom(leaderLog, follower);
    await leaderAppend(follower, { records: 5, epoch: 1, tag: 'lost' }).done; // 5-9, lost in an unclean election
    await leaderAppend(follower, { records: 2, epoch: 1, tag: 'lost' }).done; // 10-11, past the high watermark
    const leader = new FakeLeader('t', TOPIC_ID, leaderLog, 2, { fetchVersion: 11, offsetForLeaderEpoch: false });
    const warnings: { msg: string; topic?: string; partition?: number; from?: number; to?: number; count?: number }[] = [];
    const logger = createLogger({
      level: 'warn', format: 'json',
      destination: new Writable({ write(chunk: Buffer, _encoding, done) { warnings.push(JSON.parse(chunk.toString())); done(); } }),
    });
    const { manager, highWatermarks } = follow(leader, { logger });
    manager.addPartitions(LEADER, [partitionOf(follower, 2, 10)]);
    await until('the follower to cut its tail', () => leader.fetchAnswers.length >= 2);

    expect(leader.fetches()[0].topics[0].partitions[0].fetchOffset).to.equal(10n); // cut to the high watermark
    expect(leader.fetchAnswers[0].errorCode).to.equal(ErrorCode.OFFSET_OUT_OF_RANGE);
    expect(leader.fetches()[1].topics[0].partitions[0].fetchOffset).to.equal(5n);
    expect(follower.logEndOffset).to.equal(5);
    expect(await logBytes(follower)).to.deep.equal(await logBytes(leaderLog));
    expect(highWatermarks).to.deep.equal([5]); // 10, then cut to 5, below it (warned, as Kafka does)
    // The cut to the high watermark removed only uncommitted records; the one below it is warned with its range.
    const belowHighWatermark = warnings.filter((w) => w.msg.includes('below its high watermark'));
    expect(belowHighWatermark.map(({ topic, partition, from, to, count }) => ({ topic, partition, from, to, count })))
      .to.deep.equal([{ topic: 't', partition: 0, from: 5, to: 9, count: 5 }]);
    expect(belowHighWatermark[0].msg).to.contain('t-0').and.contain('offsets 5..9 (5) removed');
  });

  it('a fenced leader epoch parks the partition until it is added again with the new epoch', async () => {
    const leaderLog = await openLog();
    await leaderAppend(leaderLog, { records: 2, epoch: 3 }).done;
    const follower = await openLog();
    const leader = new FakeLeader('t', TOPIC_ID, leaderLog, 3);
    const { manager } = follow(leader);
    manager.addPartitions(LEADER, [partitionOf(follower, 2)]);
    await until('the partition to be parked', () => manager.isParked('t', 0));
    expect(leader.fetchAnswers.map((a) => a.errorCode)).to.deep.equal([ErrorCode.FENCED_LEADER_EPOCH]);
    await sleep(150);
    expect(leader.fetches()).to.have.length(1);
    expect(follower.logEndOffset).to.equal(0);

    manager.addPartitions(LEADER, [partitionOf(follower, 3)]);
    await until('the follower to catch up', () => manager.followerHighWatermark('t', 0) === 2);
    expect(manager.isParked('t', 0)).to.equal(false);
    expect(await logBytes(follower)).to.deep.equal(await logBytes(leaderLog));
  });

  it('UNKNOWN_LEADER_EPOCH (the leader has not taken its epoch yet) is retried after the backoff', async () => {
    const leaderLog = await openLog();
    await leaderAppend(leaderLog, { records: 2, epoch: 3 }).done;
    const follower = await openLog();
    const leader = new FakeLeader('t', TOPIC_ID, leaderLog, 3);
    const { manager } = follow(leader);
    manager.addPartitions(LEADER, [partitionOf(follower, 4)]);
    await until('two answers', () => leader.fetchAnswers.length >= 2);
    expect(leader.fetchAnswers.slice(0, 2).map((a) => a.errorCode)).to.deep.equal([ErrorCode.UNKNOWN_LEADER_EPOCH, ErrorCode.UNKNOWN_LEADER_EPOCH]);
    leader.leaderEpoch = 4;
    await until('the follower to catch up', () => manager.followerHighWatermark('t', 0) === 2);
  });

  it('reconnects after refused connections and a dropped request, after the backoff', async () => {
    const leaderLog = await openLog();
    await leaderAppend(leaderLog, { records: 4, epoch: 0 }).done;
    const follower = await openLog();
    const leader = new FakeLeader('t', TOPIC_ID, leaderLog, 0);
    leader.refuseConnections = 2;
    leader.failRequests = 1;
    const { manager } = follow(leader);
    manager.addPartitions(LEADER, [partitionOf(follower, 0)]);
    await until('the follower to catch up', () => manager.followerHighWatermark('t', 0) === 4);
    expect(leader.connections).to.equal(2); // the one whose request dropped, and its successor
    expect(leader.fetches().length).to.be.at.least(2);
    expect(await logBytes(follower)).to.deep.equal(await logBytes(leaderLog));
  });

  it('removePartitions resolves once the partition\'s append in flight is written, and nothing follows it', async () => {
    const leaderLog = await openLog();
    await leaderAppend(leaderLog, { records: 4, epoch: 0 }).done;
    const follower = await openLog();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let appends = 0;
    const appendAsFollower = follower.appendAsFollower.bind(follower);
    follower.appendAsFollower = (batches: Buffer) => {
      appends++;
      const appended = appendAsFollower(batches);
      return { ...appended, done: appended.done.then(() => gate) };
    };
    const leader = new FakeLeader('t', TOPIC_ID, leaderLog, 0);
    const { manager, highWatermarks } = follow(leader);
    manager.addPartitions(LEADER, [partitionOf(follower, 0)]);
    await until('the append to start', () => appends === 1);

    let removed = false;
    const removal = manager.removePartitions([{ topic: 't', partition: 0 }]).then(() => (removed = true));
    await sleep(100);
    expect(removed).to.equal(false);
    release();
    await removal;
    const fetches = leader.fetches().length;
    await sleep(100);
    expect(leader.fetches().length).to.equal(fetches);
    expect(highWatermarks).to.deep.equal([]); // the removed partition's answer is not applied
    expect(manager.followerHighWatermark('t', 0)).to.equal(undefined);
    expect(follower.logEndOffset).to.equal(4);
  });

  it('a corrupt batch is fetched again after the backoff; a storage error parks the partition until it is added again', async () => {
    const leaderLog = await openLog();
    await leaderAppend(leaderLog, { records: 3, epoch: 0 }).done;
    const follower = await openLog();
    const leader = new FakeLeader('t', TOPIC_ID, leaderLog, 0);
    leader.corruptRecords = 1;
    const appendAsFollower = follower.appendAsFollower.bind(follower);
    let diskGone = false;
    follower.appendAsFollower = (batches: Buffer) => {
      if (diskGone) throw new StorageError('KAFKA_STORAGE_ERROR', 'the disk is gone');
      return appendAsFollower(batches);
    };
    const { manager } = follow(leader);
    manager.addPartitions(LEADER, [partitionOf(follower, 0)]);
    await until('the follower to catch up', () => manager.followerHighWatermark('t', 0) === 3);
    expect(leader.fetches().slice(0, 2).map((f) => f.topics[0].partitions[0].fetchOffset)).to.deep.equal([0n, 0n]);

    diskGone = true;
    await leaderAppend(leaderLog, { records: 2, epoch: 0 }).done;
    await until('the partition to be parked', () => manager.isParked('t', 0));
    const fetches = leader.fetches().length;
    await sleep(100);
    expect(leader.fetches().length).to.equal(fetches);

    diskGone = false;
    manager.addPartitions(LEADER, [partitionOf(follower, 0)]);
    await until('the follower to catch up', () => manager.followerHighWatermark('t', 0) === 5);
    expect(await logBytes(follower)).to.deep.equal(await logBytes(leaderLog));
  });

  it('a partition moved to a new leader leaves the old leader\'s fetcher, which closes, and follows the new one', async () => {
    const oldLeaderLog = await openLog();
    await leaderAppend(oldLeaderLog, { records: 4, epoch: 0 }).done;
    const newLeaderLog = await openLog();
    await fetchFrom(oldLeaderLog, newLeaderLog);
    await leaderAppend(newLeaderLog, { records: 3, epoch: 1 }).done;
    const follower = await openLog();
    const oldLeader = new FakeLeader('t', TOPIC_ID, oldLeaderLog, 0);
    const newLeader = new FakeLeader('t', TOPIC_ID, newLeaderLog, 1);
    const { manager } = follow((id) => (id === LEADER ? oldLeader : newLeader).connect(id));
    manager.addPartitions(LEADER, [partitionOf(follower, 0)]);
    await until('the follower to catch up with the old leader', () => manager.followerHighWatermark('t', 0) === 4);

    manager.addPartitions(3, [partitionOf(follower, 1)]);
    const oldFetches = oldLeader.fetches().length;
    await until('the follower to catch up with the new leader', () => manager.followerHighWatermark('t', 0) === 7);
    expect(oldLeader.fetches().length).to.be.at.most(oldFetches + 1); // at most the one in flight at the move
    expect([oldLeader.connections, oldLeader.closedConnections]).to.deep.equal([1, 1]);
    expect(newLeader.fetches()[0].topics[0].partitions[0]).to.deep.include({ fetchOffset: 4n, lastFetchedEpoch: 0, currentLeaderEpoch: 1 });
    expect(await logBytes(follower)).to.deep.equal(await logBytes(newLeaderLog));
    expect(follower.leaderEpochEntries()).to.deep.equal([{ epoch: 0, startOffset: 0 }, { epoch: 1, startOffset: 4 }]);
  });

  it('builds a Fetch that each version can carry: replicaId or ReplicaState, topic name or id, lastFetchedEpoch from v12, HighWatermark from v18', () => {
    const target = { topic: 't', topicId: TOPIC_ID, partition: 3, leaderEpoch: 5 };
    const limits = { maxWaitMs: 500, minBytes: 1, maxBytes: 10 << 20, partitionMaxBytes: 1 << 20 };
    const decoded = [4, 11, 12, 13, 14, 15, 17, 18].map((version) => {
      const body = buildFetchRequest(version, { brokerId: FOLLOWER, brokerEpoch: 7n }, limits,
        [{ target, fetchOffset: 40, lastFetchedEpoch: 4, logStartOffset: 10, highWatermark: 38 }]);
      const w = new Writer();
      apiSpecs[ApiKey.Fetch].encodeRequest(w, body, version);
      const request = apiSpecs[ApiKey.Fetch].decodeRequest(new Reader(Buffer.concat(w.finish())), version);
      const p = request.topics[0].partitions[0];
      return [version, request.replicaId, request.replicaState?.replicaId ?? -1, request.topics[0].topic ?? '', request.topics[0].topicId === TOPIC_ID,
        p.lastFetchedEpoch, p.fetchOffset, p.highWatermark];
    });
    expect(decoded).to.deep.equal([
      [4, 2, -1, 't', false, -1, 40n, UNKNOWN_HIGH_WATERMARK],
      [11, 2, -1, 't', false, -1, 40n, UNKNOWN_HIGH_WATERMARK],
      [12, 2, -1, 't', false, 4, 40n, UNKNOWN_HIGH_WATERMARK],
      [13, 2, -1, '', true, 4, 40n, UNKNOWN_HIGH_WATERMARK],
      [14, 2, -1, '', true, 4, 40n, UNKNOWN_HIGH_WATERMARK],
      [15, -1, 2, '', true, 4, 40n, UNKNOWN_HIGH_WATERMARK],
      [17, -1, 2, '', true, 4, 40n, UNKNOWN_HIGH_WATERMARK],
      [18, -1, 2, '', true, 4, 40n, 38n],
    ]);
  });

  it('appends only the whole batches of an answer that ends with part of one', () => {
    const records = concatBatches({ records: 2 }, { records: 3, payload: 40 }, { records: 1 });
    const third = records.length - 81;
    expect(wholeBatches(records)).to.equal(records);
    expect(wholeBatches(records.subarray(0, third + 30))).to.deep.equal(records.subarray(0, third));
    expect(wholeBatches(records.subarray(0, 20))).to.have.length(0);
  });

  it('hashes partitions over num.replica.fetchers as Kafka\'s getFetcherId does', () => {
    // Java: Utils.abs(31 * "topic".hashCode() + p) % n, "topic".hashCode() = 110546223.
    expect([0, 1, 2, 3].map((p) => fetcherIdOf('topic', p, 4))).to.deep.equal([3, 2, 1, 0]);
    expect(fetcherIdOf('t', 5, 1)).to.equal(0);
  });
});
