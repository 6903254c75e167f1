// The share-partition state machine (Kafka 4.4's SharePartition) over an in-memory persister and a
// hand-driven clock: acquisition, lock expiry, acknowledgements, the delivery count limit, max
// record locks, the start offset, gaps, aborted transactions, persistence and reload.
import { expect } from 'chai';
import { ErrorCode } from '../../src/common/errors';
import type { ShareGroupSettings } from '../../src/config/group-config';
import { DeliveryState } from '../../src/share-state/persister';
import { ResetTarget, createSharePartition } from '../../src/share/in-flight-records';
import { AcknowledgeType, ArchivedRecords, LogBatchBounds, SharePartition } from '../../src/share/share-partition';
import { ManualClock } from '../helpers/manual-clock';
import { MemoryPersister } from '../helpers/memory-persister';

const key = { groupId: 'g', topicId: 'AAAAAAAAAAAAAAAAAAAAAQ', partition: 0 };
const LOCK_MS = 30_000;

const batch = (base: number, last: number, extra: Partial<LogBatchBounds> = {}): LogBatchBounds =>
  ({ baseOffset: BigInt(base), lastOffset: BigInt(last), isControl: false, isTransactional: false, producerId: -1n, ...extra });
/** The log's batches of `size` records from `from` to `to`. */
const log = (from: number, to: number, size = 5): LogBatchBounds[] => {
  const out: LogBatchBounds[] = [];
  for (let b = from; b <= to; b += size) out.push(batch(b, Math.min(b + size - 1, to)));
  return out;
};
const range = (first: number, last: number, deliveryCount: number) => ({ firstOffset: BigInt(first), lastOffset: BigInt(last), deliveryCount });
const ack = (first: number, last: number, ...types: AcknowledgeType[]) => ({ firstOffset: BigInt(first), lastOffset: BigInt(last), acknowledgeTypes: types });
const flush = () => new Promise((r) => setImmediate(r));

interface Setup {
  sp: SharePartition;
  clock: ManualClock;
  persister: MemoryPersister;
  settings: ShareGroupSettings;
  archived: ArchivedRecords[];
  resets: ResetTarget[];
  available: () => number;
}

async function setup(overrides: Partial<ShareGroupSettings> = {}, persister = new MemoryPersister(), clock = new ManualClock(),
  deadLetterQueue?: (r: ArchivedRecords) => Promise<void>): Promise<Setup> {
  const settings: ShareGroupSettings = {
    recordLockDurationMs: LOCK_MS, deliveryCountLimit: 5, maxRecordLocks: 2000, autoOffsetReset: 'earliest',
    readCommitted: false, renewAcknowledgeEnable: true, deadLetterQueue: false, ...overrides,
  };
  const archived: ArchivedRecords[] = [];
  const resets: ResetTarget[] = [];
  const sp = createSharePartition({
    key, topicName: 't', leaderEpoch: 3, persister, settings: () => settings,
    resetOffset: async (to) => {
      resets.push(to);
      return to === 'earliest' ? 0n : to === 'latest' ? 100n : 40n;
    },
    onArchived: (r) => {
      archived.push(r);
      return deadLetterQueue?.(r);
    },
    now: clock.now, setTimer: clock.setTimer,
  });
  let notified = 0;
  sp.onAvailable(() => notified++);
  expect(await sp.load()).to.equal(ErrorCode.NONE);
  return { sp, clock, persister, settings, archived, resets, available: () => notified };
}

describe('share/share-partition', () => {
  describe('load', () => {
    it('starts a share-partition the coordinator never saw where share.auto.offset.reset says, and initializes it', async () => {
      const earliest = await setup();
      expect(earliest.resets).to.deep.equal(['earliest']);
      expect(earliest.sp.startOffset()).to.equal(0n);
      expect(earliest.sp.nextFetchOffset()).to.equal(0n);
      expect(earliest.persister.initializations).to.deep.equal([{ key, stateEpoch: 0, startOffset: 0n }]);

      const latest = await setup({ autoOffsetReset: 'latest' }, new MemoryPersister('uninitialized'));
      expect(latest.resets).to.deep.equal(['latest']);
      expect(latest.sp.startOffset()).to.equal(100n);
      expect(latest.sp.endOffset()).to.equal(100n);
      expect(latest.persister.initializations).to.deep.equal([]);

      const clock = new ManualClock(5_000_000);
      const byDuration = await setup({ autoOffsetReset: { durationMs: 60_000 } }, new MemoryPersister(), clock);
      expect(byDuration.resets).to.deep.equal([{ timestampMs: 5_000_000 - 60_000 }]);
      expect(byDuration.sp.startOffset()).to.equal(40n);
    });

    it("answers the share coordinator's errors as the fetch path does, and tries again on the next call", async () => {
      const persister = new MemoryPersister();
      let answer: number = ErrorCode.COORDINATOR_LOAD_IN_PROGRESS;
      persister.read = async () => ({ errorCode: answer, errorMessage: null }) as never;
      const sp = createSharePartition({ key, topicName: 't', leaderEpoch: 0, persister, settings: () => ({}) as never, resetOffset: async () => 0n });
      expect(await sp.load()).to.equal(ErrorCode.COORDINATOR_NOT_AVAILABLE);
      expect(sp.nextFetchOffset()).to.equal(null);
      answer = ErrorCode.FENCED_STATE_EPOCH;
      expect(await sp.load()).to.equal(ErrorCode.NOT_LEADER_OR_FOLLOWER);
      answer = ErrorCode.GROUP_ID_NOT_FOUND;
      expect(await sp.load()).to.equal(ErrorCode.GROUP_ID_NOT_FOUND);
    });
  });

  describe('acquire', () => {
    it('acquires new records for a member with delivery count 1, whole log batches past maxRecords', async () => {
      const { sp } = await setup();
      expect(sp.acquire('m1', log(0, 14), 6)).to.deep.equal([range(0, 9, 1)]);
      expect(sp.nextFetchOffset()).to.equal(10n);
      expect(sp.endOffset()).to.equal(9n);
      expect(sp.acquire('m2', log(10, 14), 500)).to.deep.equal([range(10, 14, 1)]);
      // Nothing is available any more below the end: the next read starts past it.
      expect(sp.acquire('m2', log(0, 14), 500)).to.deep.equal([]);
      expect(sp.nextFetchOffset()).to.equal(15n);
    });

    it('acquires exactly maxRecords in record_limit mode, splitting batches', async () => {
      const { sp, clock } = await setup();
      const records = [batch(0, 1, { isControl: true, isTransactional: true, producerId: 3n }), ...log(2, 14)];
      expect(sp.acquire('m', records, 4, [], undefined, true)).to.deep.equal([range(2, 5, 1)]);
      expect(sp.nextFetchOffset()).to.equal(6n);
      expect(sp.acquire('m', log(5, 14), 4, [], undefined, true)).to.deep.equal([range(6, 9, 1)]);
      clock.advance(LOCK_MS);
      expect(sp.acquire('m', records, 3, [], undefined, true)).to.deep.equal([range(2, 4, 2)]);
      expect(sp.acquire('m', records, 3, [], undefined, true)).to.deep.equal([range(5, 7, 2)]);
    });

    it('releases the records when their lock expires: available again, redelivered with the next delivery count', async () => {
      const { sp, clock, persister, available } = await setup();
      sp.acquire('m1', log(0, 9), 500);
      const notifiedBefore = available();
      clock.advance(LOCK_MS - 1);
      expect(sp.nextFetchOffset()).to.equal(10n);
      clock.advance(1);
      expect(available()).to.equal(notifiedBefore + 1);
      expect(sp.nextFetchOffset()).to.equal(0n);
      await flush();
      expect(persister.writes.at(-1)!.change.stateBatches).to.deep.equal([
        { firstOffset: 0n, lastOffset: 9n, deliveryState: DeliveryState.AVAILABLE, deliveryCount: 1 },
      ]);
      expect(sp.acquire('m2', log(0, 9), 500)).to.deep.equal([range(0, 9, 2)]);
      // m1's lock is gone: it cannot acknowledge what m2 holds now.
      expect(await sp.acknowledge('m1', [ack(0, 9, AcknowledgeType.ACCEPT)])).to.equal(ErrorCode.INVALID_RECORD_STATE);
      expect(await sp.acknowledge('m2', [ack(0, 9, AcknowledgeType.ACCEPT)])).to.equal(ErrorCode.NONE);
    });

    it('archives control batches and, in read_committed, the records of aborted transactions, acquiring the rest', async () => {
      const records = [
        batch(0, 1, { isTransactional: true, producerId: 7n }),
        batch(2, 2, { isTransactional: true, producerId: 8n }),
        batch(3, 3, { isControl: true, isTransactional: true, producerId: 7n }),
        batch(4, 6),
        batch(7, 7, { isControl: true, isTransactional: true, producerId: 8n }),
      ];
      const aborted = [{ producerId: 7n, firstOffset: 0n }];
      const committed = await setup({ readCommitted: true });
      expect(committed.sp.acquire('m', records, 500, aborted)).to.deep.equal([range(2, 2, 1), range(4, 6, 1)]);
      expect(committed.sp.startOffset()).to.equal(2n);
      expect(await committed.sp.acknowledge('m', [ack(2, 2, AcknowledgeType.ACCEPT)])).to.equal(ErrorCode.NONE);
      // 0-1 aborted, 2 accepted, 3 a marker: the start moves to the first record still in flight.
      expect(committed.sp.startOffset()).to.equal(4n);
      expect(await committed.sp.acknowledge('m', [ack(0, 1, AcknowledgeType.ACCEPT)])).to.equal(ErrorCode.INVALID_RECORD_STATE);

      const uncommitted = await setup();
      expect(uncommitted.sp.acquire('m', records, 500, aborted)).to.deep.equal([range(0, 2, 1), range(4, 6, 1)]);
    });

    it('archives records the log no longer has between the fetch offset and what it returned (compaction)', async () => {
      const { sp } = await setup();
      sp.acquire('m1', log(0, 9), 500);
      expect(await sp.acknowledge('m1', [ack(0, 9, AcknowledgeType.RELEASE)])).to.equal(ErrorCode.NONE);
      expect(sp.nextFetchOffset()).to.equal(0n);
      // Offsets 0-3 were compacted away: the log's first batch now starts at 4.
      expect(sp.acquire('m2', [batch(4, 9)], 500, [], 0n)).to.deep.equal([range(4, 9, 2)]);
      await flush();
      expect(sp.startOffset()).to.equal(4n);
    });

    it('archives offsets compaction removed between batches and before the first batch returned, never delivering them', async () => {
      const { sp } = await setup();
      expect(sp.acquire('m', [batch(0, 4), batch(8, 9)], 500)).to.deep.equal([range(0, 4, 1), range(8, 9, 1)]);
      expect(await sp.acknowledge('m', [ack(0, 4, AcknowledgeType.ACCEPT), ack(8, 9, AcknowledgeType.ACCEPT)])).to.equal(ErrorCode.NONE);
      expect(sp.startOffset()).to.equal(10n);
      // Read from 10, the log's next batch starts at 15.
      expect(sp.acquire('m', [batch(15, 19)], 500)).to.deep.equal([range(15, 19, 1)]);
      expect(await sp.acknowledge('m', [ack(15, 19, AcknowledgeType.ACCEPT)])).to.equal(ErrorCode.NONE);
      expect(sp.startOffset()).to.equal(20n);

      // Reloaded with offsets never delivered below an acknowledged run, which compaction then removed in part.
      const persister = new MemoryPersister();
      persister.setState(key, { stateEpoch: 1, leaderEpoch: 0, startOffset: 0n, deliveryCompleteCount: 5, stateBatches: [
        { firstOffset: 5n, lastOffset: 9n, deliveryState: DeliveryState.ACKNOWLEDGED, deliveryCount: 1 },
      ] });
      const reloaded = await setup({}, persister);
      expect(reloaded.sp.nextFetchOffset()).to.equal(0n);
      expect(reloaded.sp.acquire('m', [batch(3, 4), batch(5, 9), batch(10, 12)], 500)).to.deep.equal([range(3, 4, 1), range(10, 12, 1)]);
      expect(await reloaded.sp.acknowledge('m', [ack(3, 4, AcknowledgeType.ACCEPT)])).to.equal(ErrorCode.NONE);
      expect(reloaded.sp.startOffset()).to.equal(10n);
      expect(persister.writes.at(-1)!.change).to.deep.include({ stateEpoch: 1, startOffset: 10n });
    });

    it('acknowledges offsets with no record (compaction within a batch) as GAP', async () => {
      const { sp } = await setup();
      sp.acquire('m', log(0, 9, 10), 500);
      const types = Array.from({ length: 10 }, (_, i) => (i === 3 || i === 5 ? AcknowledgeType.GAP : AcknowledgeType.ACCEPT));
      expect(await sp.acknowledge('m', [ack(0, 9, ...types)])).to.equal(ErrorCode.NONE);
      expect(sp.startOffset()).to.equal(10n);
      expect(sp.nextFetchOffset()).to.equal(10n);
    });

    it('stops at share.partition.max.record.locks records in flight, and goes on once the start moves', async () => {
      const { sp } = await setup({ maxRecordLocks: 100 });
      expect(sp.acquire('m', log(0, 199, 50), 500)).to.deep.equal([range(0, 99, 1)]);
      expect(sp.nextFetchOffset()).to.equal(null);
      expect(sp.acquire('m', log(100, 199, 50), 500)).to.deep.equal([]);
      expect(await sp.acknowledge('m', [ack(0, 49, AcknowledgeType.ACCEPT)])).to.equal(ErrorCode.NONE);
      expect(sp.nextFetchOffset()).to.equal(100n);
      expect(sp.acquire('m', log(100, 199, 25), 500)).to.deep.equal([range(100, 149, 1)]);
      // At the limit, records already in flight can still be acquired again.
      expect(await sp.acknowledge('m', [ack(50, 59, AcknowledgeType.RELEASE)])).to.equal(ErrorCode.NONE);
      expect(sp.nextFetchOffset()).to.equal(50n);
      expect(sp.acquire('m', log(50, 99, 50), 500)).to.deep.equal([range(50, 59, 2)]);
    });

    it('throttles redelivery near the delivery count limit as Kafka 4.4 does: halves, then the last attempt alone', async () => {
      const { sp, clock } = await setup({ deliveryCountLimit: 5 });
      for (let delivery = 1; delivery <= 3; delivery++) {
        expect(sp.acquire('m', log(0, 9, 10), 500)).to.deep.equal([range(0, 9, delivery)]);
        clock.advance(LOCK_MS);
      }
      // Delivered 3 times (the throttle limit of 5 is 3): half the batch at a time.
      expect(sp.acquire('m', log(0, 9, 10), 500)).to.deep.equal([range(0, 4, 4)]);
      expect(sp.acquire('m', log(0, 9, 10), 500)).to.deep.equal([range(5, 9, 4)]);
      clock.advance(LOCK_MS);
      // The last attempt: one record at a time.
      expect(sp.acquire('m', log(0, 9, 10), 500)).to.deep.equal([range(0, 0, 5)]);
      expect(sp.acquire('m', log(1, 9, 9), 500)).to.deep.equal([range(1, 1, 5)]);
    });

    it('delivers a throttled batch in a fetch of its own', async () => {
      const { sp, clock } = await setup({ deliveryCountLimit: 5 });
      sp.acquire('m', log(0, 4), 500);
      sp.acquire('m', log(5, 9), 500);
      expect(await sp.acknowledge('m', [ack(0, 4, AcknowledgeType.RELEASE)])).to.equal(ErrorCode.NONE);
      clock.advance(LOCK_MS);
      for (const delivery of [2, 3]) {
        expect(sp.acquire('m', log(5, 9), 500)).to.deep.equal([range(5, 9, delivery)]);
        clock.advance(LOCK_MS);
      }
      expect(sp.acquire('m', log(0, 9), 500)).to.deep.equal([range(0, 4, 2)]);
      expect(sp.acquire('m', log(5, 9), 500)).to.deep.equal([range(5, 6, 4)]);
    });
  });

  describe('acknowledge', () => {
    it('ACCEPT moves the start offset past the acknowledged prefix and persists it', async () => {
      const { sp, persister } = await setup();
      sp.acquire('m', log(0, 9), 500);
      expect(await sp.acknowledge('m', [ack(0, 2, AcknowledgeType.ACCEPT), ack(5, 6, AcknowledgeType.ACCEPT)])).to.equal(ErrorCode.NONE);
      expect(sp.startOffset()).to.equal(3n);
      const write = persister.writes.at(-1)!.change;
      expect(write).to.deep.include({ startOffset: 3n, leaderEpoch: 3, stateEpoch: 0, deliveryCompleteCount: 2 });
      expect(write.stateBatches).to.deep.equal([{ firstOffset: 5n, lastOffset: 6n, deliveryState: DeliveryState.ACKNOWLEDGED, deliveryCount: 1 }]);
      expect(await sp.acknowledge('m', [ack(3, 4, AcknowledgeType.ACCEPT)])).to.equal(ErrorCode.NONE);
      expect(sp.startOffset()).to.equal(7n);
      expect(persister.state(key)!.startOffset).to.equal(7n);
    });

    it('RELEASE makes records available again at once; REJECT archives them and reports them', async () => {
      const { sp, archived } = await setup();
      sp.acquire('m1', log(0, 9), 500);
      expect(await sp.acknowledge('m1', [ack(0, 4, AcknowledgeType.RELEASE), ack(5, 9, AcknowledgeType.REJECT)])).to.equal(ErrorCode.NONE);
      expect(archived).to.deep.equal([{ key, topicName: 't', firstOffset: 5n, lastOffset: 9n, deliveryCount: 1, cause: 'rejected' }]);
      expect(sp.nextFetchOffset()).to.equal(0n);
      expect(sp.acquire('m2', log(0, 9), 500)).to.deep.equal([range(0, 4, 2)]);
      expect(await sp.acknowledge('m2', [ack(0, 4, AcknowledgeType.ACCEPT)])).to.equal(ErrorCode.NONE);
      expect(sp.startOffset()).to.equal(10n);
    });

    it('archives records at the delivery count limit, released or expired, and reports them', async () => {
      const { sp, clock, archived } = await setup({ deliveryCountLimit: 2 });
      sp.acquire('m', log(0, 9), 500);
      clock.advance(LOCK_MS);
      expect(sp.acquire('m', log(0, 9), 500)).to.deep.equal([range(0, 9, 2)]);
      expect(await sp.acknowledge('m', [ack(0, 4, AcknowledgeType.RELEASE)])).to.equal(ErrorCode.NONE);
      clock.advance(LOCK_MS);
      await flush();
      expect(archived.map((a) => [a.firstOffset, a.lastOffset, a.deliveryCount, a.cause])).to.deep.equal([
        [0n, 4n, 2, 'delivery-count-exceeded'], [5n, 9n, 2, 'delivery-count-exceeded'],
      ]);
      expect(sp.startOffset()).to.equal(10n);
      expect(sp.nextFetchOffset()).to.equal(10n);
    });

    it('is all or nothing: a range the member does not hold fails the whole call with INVALID_RECORD_STATE', async () => {
      const { sp, persister } = await setup();
      sp.acquire('m1', log(0, 4), 500);
      sp.acquire('m2', log(5, 9), 500);
      const writes = persister.writes.length;
      expect(await sp.acknowledge('m1', [ack(0, 4, AcknowledgeType.ACCEPT), ack(5, 5, AcknowledgeType.ACCEPT)])).to.equal(ErrorCode.INVALID_RECORD_STATE);
      // Past the records in flight: a bad request, as in Kafka.
      expect(await sp.acknowledge('m1', [ack(3, 12, AcknowledgeType.ACCEPT)])).to.equal(ErrorCode.INVALID_REQUEST);
      expect(await sp.acknowledge('m1', [ack(10, 12, AcknowledgeType.ACCEPT)])).to.equal(ErrorCode.INVALID_REQUEST);
      expect(persister.writes.length).to.equal(writes);
      expect(sp.startOffset()).to.equal(0n);
      expect(await sp.acknowledge('m1', [ack(0, 4, AcknowledgeType.ACCEPT)])).to.equal(ErrorCode.NONE);
      // Acknowledged already.
      expect(await sp.acknowledge('m1', [ack(0, 0, AcknowledgeType.ACCEPT)])).to.equal(ErrorCode.INVALID_RECORD_STATE);
    });

    it('refuses malformed acknowledgements with INVALID_REQUEST, renewals the group does not allow with INVALID_RECORD_STATE', async () => {
      const { sp } = await setup({ renewAcknowledgeEnable: false });
      sp.acquire('m', log(0, 9), 500);
      expect(await sp.acknowledge('m', [ack(5, 4, AcknowledgeType.ACCEPT)])).to.equal(ErrorCode.INVALID_REQUEST);
      expect(await sp.acknowledge('m', [ack(0, 3, AcknowledgeType.ACCEPT, AcknowledgeType.REJECT)])).to.equal(ErrorCode.INVALID_REQUEST);
      expect(await sp.acknowledge('m', [ack(0, 3, AcknowledgeType.ACCEPT), ack(2, 5, AcknowledgeType.ACCEPT)])).to.equal(ErrorCode.INVALID_REQUEST);
      expect(await sp.acknowledge('m', [ack(0, 0, 9 as AcknowledgeType)])).to.equal(ErrorCode.INVALID_REQUEST);
      // Kafka answers a renewal the group does not allow as a record state it cannot take.
      expect(await sp.acknowledge('m', [ack(0, 0, AcknowledgeType.RENEW)])).to.equal(ErrorCode.INVALID_RECORD_STATE);
      expect(await sp.acknowledge('m', [ack(0, 9, AcknowledgeType.ACCEPT)])).to.equal(ErrorCode.NONE);
    });

    it('RENEW keeps the records acquired for another lock duration', async () => {
      const { sp, clock } = await setup();
      sp.acquire('m', log(0, 9), 500);
      clock.advance(LOCK_MS - 1000);
      expect(await sp.acknowledge('m', [ack(0, 4, AcknowledgeType.RENEW)])).to.equal(ErrorCode.NONE);
      clock.advance(LOCK_MS - 1000);
      // 5-9 expired; 0-4 are still m's.
      expect(sp.nextFetchOffset()).to.equal(5n);
      expect(await sp.acknowledge('m', [ack(0, 4, AcknowledgeType.ACCEPT)])).to.equal(ErrorCode.NONE);
      expect(sp.startOffset()).to.equal(5n);
    });

    it('leaves the records as they were when the write fails, answering the code the fetch path answers', async () => {
      const { sp, persister } = await setup();
      sp.acquire('m', log(0, 9), 500);
      persister.failWrites.push(ErrorCode.NOT_COORDINATOR, ErrorCode.UNKNOWN_SERVER_ERROR);
      expect(await sp.acknowledge('m', [ack(0, 9, AcknowledgeType.ACCEPT)])).to.equal(ErrorCode.COORDINATOR_NOT_AVAILABLE);
      expect(sp.startOffset()).to.equal(0n);
      expect(await sp.acknowledge('m', [ack(0, 4, AcknowledgeType.RELEASE)])).to.equal(ErrorCode.UNKNOWN_SERVER_ERROR);
      expect(sp.nextFetchOffset()).to.equal(10n);
      expect(await sp.acknowledge('m', [ack(0, 9, AcknowledgeType.ACCEPT)])).to.equal(ErrorCode.NONE);
      expect(sp.startOffset()).to.equal(10n);
    });

    it('closes when the share coordinator fences it: a new share-partition reads the state again', async () => {
      const { sp, persister, clock } = await setup();
      sp.acquire('m', log(0, 9), 500);
      persister.failWrites.push(ErrorCode.FENCED_STATE_EPOCH);
      expect(await sp.acknowledge('m', [ack(0, 4, AcknowledgeType.ACCEPT)])).to.equal(ErrorCode.NOT_LEADER_OR_FOLLOWER);
      expect(sp.nextFetchOffset()).to.equal(null);
      expect(sp.acquire('m', log(10, 14), 500)).to.deep.equal([]);
      expect(await sp.acknowledge('m', [ack(5, 9, AcknowledgeType.ACCEPT)])).to.equal(ErrorCode.NOT_LEADER_OR_FOLLOWER);
      expect(await sp.load()).to.equal(ErrorCode.NOT_LEADER_OR_FOLLOWER);
      expect(clock.pending).to.equal(0);
      const again = await setup({}, persister);
      expect(again.sp.nextFetchOffset()).to.equal(0n);
    });

    it('expires a lock that ran out while a failed write was in flight once the write fails', async () => {
      const { sp, clock, persister } = await setup();
      sp.acquire('m', log(0, 9), 500);
      persister.hold();
      persister.failWrites.push(ErrorCode.UNKNOWN_SERVER_ERROR);
      const pending = sp.acknowledge('m', [ack(0, 9, AcknowledgeType.ACCEPT)]);
      await flush();
      clock.advance(LOCK_MS);
      // Being written: neither expired nor acquirable.
      expect(sp.nextFetchOffset()).to.equal(10n);
      persister.release();
      expect(await pending).to.equal(ErrorCode.UNKNOWN_SERVER_ERROR);
      clock.advance(0);
      expect(sp.nextFetchOffset()).to.equal(0n);
    });

    it('writes no start offset past an acknowledgement still in flight, which may fail', async () => {
      const { sp, persister } = await setup();
      sp.acquire('m', log(0, 9), 500);
      persister.hold();
      persister.failWrites.push(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
      const failing = sp.acknowledge('m', [ack(0, 4, AcknowledgeType.ACCEPT)]);
      const succeeding = sp.acknowledge('m', [ack(5, 9, AcknowledgeType.ACCEPT)]);
      // Both applied at once: the records are no longer the member's to acknowledge again.
      expect(await sp.acknowledge('m', [ack(0, 0, AcknowledgeType.ACCEPT)])).to.equal(ErrorCode.INVALID_RECORD_STATE);
      await flush();
      persister.release();
      expect(await failing).to.equal(ErrorCode.COORDINATOR_NOT_AVAILABLE);
      await flush();
      persister.release();
      expect(await succeeding).to.equal(ErrorCode.NONE);
      expect(persister.writes[1].change).to.deep.include({ startOffset: 0n, deliveryCompleteCount: 5 });
      expect(sp.startOffset()).to.equal(0n);
      expect(await sp.acknowledge('m', [ack(0, 4, AcknowledgeType.ACCEPT)])).to.equal(ErrorCode.NONE);
      expect(sp.startOffset()).to.equal(10n);
    });

    it('writes acknowledgements in the order they were made', async () => {
      const { sp, persister } = await setup();
      sp.acquire('m', log(0, 9), 500);
      persister.hold();
      const first = sp.acknowledge('m', [ack(0, 4, AcknowledgeType.ACCEPT)]);
      const second = sp.acknowledge('m', [ack(5, 9, AcknowledgeType.ACCEPT)]);
      await flush();
      persister.release();
      await flush();
      persister.release();
      expect(await first).to.equal(ErrorCode.NONE);
      expect(await second).to.equal(ErrorCode.NONE);
      expect(persister.writes.map((w) => w.change.startOffset)).to.deep.equal([5n, 10n]);
    });
  });

  it("releaseAcquiredRecords makes a member's records available to the others", async () => {
    const { sp } = await setup();
    sp.acquire('m1', log(0, 4), 500);
    sp.acquire('m2', log(5, 9), 500);
    expect(await sp.releaseAcquiredRecords('m1')).to.equal(ErrorCode.NONE);
    expect(sp.nextFetchOffset()).to.equal(0n);
    expect(sp.acquire('m3', log(0, 9), 500)).to.deep.equal([range(0, 4, 2)]);
    expect(await sp.acknowledge('m2', [ack(5, 9, AcknowledgeType.ACCEPT)])).to.equal(ErrorCode.NONE);
  });

  it('archives the released records of a member that reached the delivery count limit', async () => {
    const { sp, clock, archived } = await setup({ deliveryCountLimit: 2 });
    sp.acquire('m1', log(0, 9), 500);
    clock.advance(LOCK_MS);
    sp.acquire('m1', log(0, 4), 500);
    expect(await sp.releaseAcquiredRecords('m1')).to.equal(ErrorCode.NONE);
    expect(archived.map((a) => [a.firstOffset, a.lastOffset, a.deliveryCount, a.cause])).to.deep.equal([[0n, 4n, 2, 'delivery-count-exceeded']]);
    expect(sp.startOffset()).to.equal(5n);
    expect(sp.acquire('m2', log(5, 9), 500)).to.deep.equal([range(5, 9, 2)]);
  });

  describe('with a dead-letter queue', () => {
    /** A dead-letter queue whose writes the test completes (or fails) one by one. */
    function heldQueue() {
      const writes: Array<{ records: ArchivedRecords; done: () => void; fail: () => void }> = [];
      const write = (records: ArchivedRecords) => new Promise<void>((done, fail) => writes.push({ records, done, fail: () => fail(new Error('dlq down')) }));
      return { writes, write };
    }
    const stored = (persister: MemoryPersister) => persister.state(key)!.stateBatches.map((b) => [b.firstOffset, b.lastOffset, b.deliveryState]);

    it('keeps rejected records ARCHIVING, stored so and holding the start offset, until the dead-letter queue has them', async () => {
      const dlq = heldQueue();
      const { sp, persister } = await setup({ deadLetterQueue: true }, new MemoryPersister(), new ManualClock(), dlq.write);
      sp.acquire('m', log(0, 9), 500);
      expect(await sp.acknowledge('m', [ack(0, 4, AcknowledgeType.REJECT), ack(5, 9, AcknowledgeType.ACCEPT)])).to.equal(ErrorCode.NONE);
      expect(dlq.writes.map((w) => [w.records.firstOffset, w.records.lastOffset, w.records.cause])).to.deep.equal([[0n, 4n, 'rejected']]);
      expect(sp.startOffset()).to.equal(0n);
      expect(stored(persister)).to.deep.equal([[0n, 4n, DeliveryState.ARCHIVING], [5n, 9n, DeliveryState.ACKNOWLEDGED]]);
      expect(sp.nextFetchOffset()).to.equal(10n);
      dlq.writes[0].done();
      await flush();
      expect(sp.startOffset()).to.equal(10n);
      expect(persister.state(key)).to.deep.include({ startOffset: 10n, stateBatches: [] });
    });

    it('archives regardless when the dead-letter queue write fails, and redoes ARCHIVING records after a restart', async () => {
      const persister = new MemoryPersister();
      const first = heldQueue();
      const before = await setup({ deadLetterQueue: true, deliveryCountLimit: 2 }, persister, new ManualClock(), first.write);
      before.sp.acquire('m', log(0, 9), 500);
      before.clock.advance(LOCK_MS);
      before.sp.acquire('m', log(0, 9), 500);
      before.clock.advance(LOCK_MS);
      await flush();
      expect(first.writes.map((w) => [w.records.firstOffset, w.records.lastOffset, w.records.cause])).to.deep.equal([[0n, 9n, 'delivery-count-exceeded']]);
      expect(stored(persister)).to.deep.equal([[0n, 9n, DeliveryState.ARCHIVING]]);
      before.sp.close();

      const second = heldQueue();
      const after = await setup({ deadLetterQueue: true, deliveryCountLimit: 2 }, persister, new ManualClock(), second.write);
      expect(second.writes.map((w) => [w.records.firstOffset, w.records.lastOffset, w.records.deliveryCount, w.records.cause]))
        .to.deep.equal([[0n, 9n, 2, 'delivery-count-exceeded']]);
      expect(after.sp.startOffset()).to.equal(0n);
      second.writes[0].fail();
      await flush();
      expect(after.sp.startOffset()).to.equal(10n);
      expect(persister.state(key)!.startOffset).to.equal(10n);
    });
  });

  it('follows the log start offset: the start moves and the available records below it are archived', async () => {
    const { sp } = await setup();
    sp.acquire('m', log(0, 9), 500);
    expect(await sp.acknowledge('m', [ack(0, 9, AcknowledgeType.RELEASE)])).to.equal(ErrorCode.NONE);
    sp.logStartOffsetChanged(6n);
    expect(sp.startOffset()).to.equal(6n);
    expect(sp.nextFetchOffset()).to.equal(6n);
    expect(sp.acquire('m', log(5, 9), 500)).to.deep.equal([range(6, 9, 2)]);
    sp.logStartOffsetChanged(3n);
    expect(sp.startOffset()).to.equal(6n);
  });

  it('leaves records being acknowledged alone when the log start moves past part of them', async () => {
    const { sp, persister } = await setup();
    sp.acquire('m', log(0, 9, 10), 500);
    persister.hold();
    const pending = sp.acknowledge('m', [ack(0, 9, AcknowledgeType.ACCEPT)]);
    await flush();
    sp.logStartOffsetChanged(4n);
    persister.release();
    expect(await pending).to.equal(ErrorCode.NONE);
    expect(sp.startOffset()).to.equal(10n);
    expect(sp.nextFetchOffset()).to.equal(10n);
  });

  it('reloads from the persisted state: redelivers only what was not acknowledged', async () => {
    const persister = new MemoryPersister();
    const first = await setup({}, persister);
    first.sp.acquire('m', log(0, 14), 500);
    const types = [AcknowledgeType.ACCEPT, AcknowledgeType.ACCEPT, AcknowledgeType.ACCEPT, AcknowledgeType.RELEASE, AcknowledgeType.RELEASE,
      AcknowledgeType.ACCEPT, AcknowledgeType.REJECT];
    expect(await first.sp.acknowledge('m', [ack(0, 6, ...types)])).to.equal(ErrorCode.NONE);
    first.sp.close();

    const second = await setup({}, persister);
    expect(second.resets).to.deep.equal([]);
    expect(second.sp.startOffset()).to.equal(3n);
    expect(second.sp.endOffset()).to.equal(6n);
    expect(second.sp.nextFetchOffset()).to.equal(3n);
    // 3-4 released once (delivery count 1 kept), 5-6 done, 7-14 never persisted: delivered as new.
    expect(second.sp.acquire('m', log(0, 14), 500)).to.deep.equal([range(3, 4, 2), range(7, 14, 1)]);
    expect(await second.sp.acknowledge('m', [ack(3, 4, AcknowledgeType.ACCEPT), ack(7, 14, AcknowledgeType.ACCEPT)])).to.equal(ErrorCode.NONE);
    expect(second.sp.startOffset()).to.equal(15n);
    expect(persister.state(key)).to.deep.include({ startOffset: 15n, stateBatches: [] });
  });

  it('writes nothing more once closed: acknowledgements still queued answer NOT_LEADER_OR_FOLLOWER', async () => {
    const { sp, persister } = await setup();
    sp.acquire('m', log(0, 9), 500);
    persister.hold();
    const writing = sp.acknowledge('m', [ack(0, 4, AcknowledgeType.ACCEPT)]);
    const queued = sp.acknowledge('m', [ack(5, 9, AcknowledgeType.ACCEPT)]);
    await flush();
    sp.close();
    persister.release();
    expect(await writing).to.equal(ErrorCode.NONE);
    expect(await queued).to.equal(ErrorCode.NOT_LEADER_OR_FOLLOWER);
    expect(persister.writes.length).to.equal(1);
  });

  it('stops its lock timers when closed', async () => {
    const { sp, clock } = await setup();
    sp.acquire('m', log(0, 9), 500);
    expect(clock.pending).to.equal(1);
    sp.close();
    expect(clock.pending).to.equal(0);
    expect(sp.nextFetchOffset()).to.equal(null);
    expect(await sp.acknowledge('m', [ack(0, 9, AcknowledgeType.ACCEPT)])).to.equal(ErrorCode.NOT_LEADER_OR_FOLLOWER);
  });
});
