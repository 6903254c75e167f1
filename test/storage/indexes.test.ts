import { expect } from 'chai';
import * as fs from 'fs';
import * as path from 'path';
import { formatCheckpoint, parseCheckpoint, CorruptCheckpointError } from '../../src/storage/checkpoint-file';
import { LeaderEpochCache } from '../../src/storage/leader-epoch-cache';
import { OffsetIndex } from '../../src/storage/offset-index';
import { TimeIndex } from '../../src/storage/time-index';
import { tempDirs } from './helpers';

describe('storage/offset-index', () => {
  function index(): OffsetIndex {
    const i = new OffsetIndex(100, 1000);
    // (last offset of a batch, position of that batch)
    for (const [o, p] of [[104, 0], [110, 300], [125, 900], [126, 1500]]) i.append(o, p);
    return i;
  }

  it('looks up the largest entry at or below an offset (binary search)', () => {
    const i = index();
    expect(i.lookup(99)).to.deep.equal({ offset: 100, position: 0 });
    expect(i.lookup(103)).to.deep.equal({ offset: 100, position: 0 });
    expect(i.lookup(104)).to.deep.equal({ offset: 104, position: 0 });
    expect(i.lookup(109)).to.deep.equal({ offset: 104, position: 0 });
    expect(i.lookup(110)).to.deep.equal({ offset: 110, position: 300 });
    expect(i.lookup(124)).to.deep.equal({ offset: 110, position: 300 });
    expect(i.lookup(126)).to.deep.equal({ offset: 126, position: 1500 });
    expect(i.lookup(1e9)).to.deep.equal({ offset: 126, position: 1500 });
    expect(i.batchStartAtOrBefore(899)).to.equal(300);
    expect(i.batchStartAtOrBefore(900)).to.equal(900);
    expect(i.batchStartAtOrBefore(10_000)).to.equal(1500);
  });

  it('binary search agrees with a linear scan on many entries', () => {
    const i = new OffsetIndex(0, 100_000);
    const entries: Array<[number, number]> = [];
    let o = 0;
    let p = 0;
    for (let k = 0; k < 5000; k++) {
      o += 1 + (k % 7);
      p += 50 + (k % 13);
      entries.push([o, p]);
      i.append(o, p);
    }
    for (let target = 0; target < o + 10; target += 3) {
      let want = { offset: 0, position: 0 };
      for (const [eo, ep] of entries) if (eo <= target) want = { offset: eo, position: ep };
      expect(i.lookup(target)).to.deep.equal(want);
    }
  });

  it('rejects offsets that do not increase or do not fit the segment', () => {
    const i = index();
    expect(() => i.append(126, 2000)).to.throw(/not above/);
    expect(() => i.append(100 + 2 ** 31, 2000)).to.throw(/does not fit/);
    expect(i.canAppendOffset(100 + 2 ** 31 - 1)).to.equal(true);
    expect(i.canAppendOffset(99)).to.equal(false);
  });

  it('round-trips through the file format and truncates', () => {
    const i = index();
    const bytes = i.encode();
    expect(bytes.length).to.equal(32);
    expect(bytes.readInt32BE(8)).to.equal(10); // relative offset
    expect(bytes.readInt32BE(12)).to.equal(300);
    const back = OffsetIndex.decode(bytes, 100, 1000);
    expect(back.lookup(111)).to.deep.equal({ offset: 110, position: 300 });
    back.truncateTo(125);
    expect(back.entries).to.equal(2);
    back.truncateTo(105);
    expect(back.entries).to.equal(1);
    back.truncateTo(50);
    expect(back.entries).to.equal(0);
  });

  it('finds entries out of order or pointing past the log', () => {
    expect(index().problem(2000)).to.equal(null);
    expect(index().problem(1500)).to.match(/past the log/);
    const bad = index().encode();
    bad.writeInt32BE(5, 16); // relative offset below the previous entry's
    expect(OffsetIndex.decode(bad, 100, 1000).problem(2000)).to.match(/out of order/);
  });

  it('is full at segment.index.bytes / 8 entries', () => {
    const i = new OffsetIndex(0, 2);
    i.append(1, 0);
    expect(i.isFull()).to.equal(false);
    i.append(2, 10);
    expect(i.isFull()).to.equal(true);
  });
});

describe('storage/time-index', () => {
  it('appends only growing timestamps and looks up the largest at or below', () => {
    const t = new TimeIndex(10, 100);
    t.maybeAppend(1000, 12);
    t.maybeAppend(1000, 15); // same timestamp: no entry
    t.maybeAppend(900, 16); // smaller: no entry
    t.maybeAppend(2000, 20);
    expect(t.entries).to.equal(2);
    expect(t.lookup(999)).to.deep.equal({ timestamp: -1, offset: 10 });
    expect(t.lookup(1500)).to.deep.equal({ timestamp: 1000, offset: 12 });
    expect(t.lookup(5000)).to.deep.equal({ timestamp: 2000, offset: 20 });
    const back = TimeIndex.decode(t.encode(), 10, 100);
    expect(back.lastEntry()).to.deep.equal({ timestamp: 2000, offset: 20 });
    back.truncateTo(20);
    expect(back.lastEntry()).to.deep.equal({ timestamp: 1000, offset: 12 });
  });
});

describe('storage/checkpoint-file', () => {
  it('writes and parses Kafka\'s format', () => {
    const text = formatCheckpoint([['orders', 0, 42], ['orders', 1, 7]]);
    expect(text).to.equal('0\n2\norders 0 42\norders 1 7\n');
    expect(parseCheckpoint('f', text, 3)).to.deep.equal([['orders', '0', '42'], ['orders', '1', '7']]);
  });

  it('rejects a wrong count, version or line', () => {
    expect(() => parseCheckpoint('f', '0\n3\na 0 1\n', 3)).to.throw(CorruptCheckpointError);
    expect(() => parseCheckpoint('f', '1\n0\n', 3)).to.throw(CorruptCheckpointError);
    expect(() => parseCheckpoint('f', '0\n1\na 0\n', 3)).to.throw(CorruptCheckpointError);
  });
});

describe('storage/leader-epoch-cache', () => {
  const dirs = tempDirs('fjord-epochs-');

  function cache(entries: Array<[number, number]>): LeaderEpochCache {
    const c = LeaderEpochCache.empty(dirs.next());
    for (const [e, o] of entries) c.assign(e, o);
    return c;
  }

  it('keeps epochs and start offsets increasing, as Kafka\'s assign does', () => {
    const c = cache([[0, 0], [1, 10], [1, 15], [3, 20]]);
    expect(c.all()).to.deep.equal([{ epoch: 0, startOffset: 0 }, { epoch: 1, startOffset: 10 }, { epoch: 3, startOffset: 20 }]);
    c.assign(2, 12); // lower epoch than the latest: entries >= it are dropped
    expect(c.all()).to.deep.equal([{ epoch: 0, startOffset: 0 }, { epoch: 1, startOffset: 10 }, { epoch: 2, startOffset: 12 }]);
  });

  it('answers OffsetForLeaderEpoch like LeaderEpochFileCache.endOffsetFor', () => {
    const c = cache([[2, 5], [4, 20], [7, 40]]);
    const leo = 55;
    expect(c.endOffsetFor(7, leo)).to.deep.equal({ epoch: 7, endOffset: 55 }); // latest epoch: the log end
    expect(c.endOffsetFor(4, leo)).to.deep.equal({ epoch: 4, endOffset: 40 });
    expect(c.endOffsetFor(5, leo)).to.deep.equal({ epoch: 4, endOffset: 40 }); // unknown epoch: the largest below it
    expect(c.endOffsetFor(1, leo)).to.deep.equal({ epoch: 1, endOffset: 5 }); // below all: first start offset
    expect(c.endOffsetFor(8, leo)).to.deep.equal({ epoch: -1, endOffset: -1 });
    expect(c.endOffsetFor(-1, leo)).to.deep.equal({ epoch: -1, endOffset: -1 });
    expect(c.epochForOffset(4)).to.equal(undefined);
    expect(c.epochForOffset(5)).to.equal(2);
    expect(c.epochForOffset(39)).to.equal(4);
    expect(c.epochForOffset(1000)).to.equal(7);
  });

  it('truncates from the end and from the start', () => {
    const c = cache([[2, 5], [4, 20], [7, 40]]);
    c.truncateFromEnd(40);
    expect(c.latestEpoch()).to.equal(4);
    c.truncateFromStart(25);
    expect(c.all()).to.deep.equal([{ epoch: 4, startOffset: 25 }]);
  });

  it('persists in Kafka\'s leader-epoch-checkpoint format and reloads', async () => {
    const dir = dirs.next();
    fs.mkdirSync(dir, { recursive: true });
    const c = LeaderEpochCache.empty(dir);
    c.assign(0, 0);
    c.assign(3, 17);
    await c.persisted();
    expect(fs.readFileSync(path.join(dir, 'leader-epoch-checkpoint'), 'utf8')).to.equal('0\n2\n0 0\n3 17\n');
    const back = await LeaderEpochCache.load(dir);
    expect(back.all()).to.deep.equal(c.all());
  });
});
