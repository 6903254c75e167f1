// Share sessions (Kafka's ShareSessionCache semantics): epochs, limits, the end of a session.
import { expect } from 'chai';
import { ErrorCode } from '../../src/common/errors';
import { ShareSessionCache, type ShareSession, type ConnectionCloseHook } from '../../src/share/share-sessions';

/** A connection whose close the test triggers. */
function connection(): ConnectionCloseHook & { close(): void; listeners: number } {
  const listeners = new Set<() => void>();
  return {
    onConnectionClose(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
    close() {
      for (const l of [...listeners]) l();
      listeners.clear();
    },
    get listeners() {
      return listeners.size;
    },
  };
}

const p = (topicId: string, partition: number) => ({ topicId, partition });
const T = 'aa'.repeat(16);

describe('share sessions', () => {
  let ended: ShareSession[];
  let cache: ShareSessionCache;
  let maxSessions: number;
  beforeEach(() => {
    ended = [];
    maxSessions = 2;
    cache = new ShareSessionCache(() => maxSessions, (s) => ended.push(s));
  });

  it('opens with epoch 0, then takes each next epoch, adding and forgetting partitions', () => {
    const opened = cache.fetchContext('g', 'm1', 0, [p(T, 0), p(T, 1)], [], false, connection());
    expect(opened.kind).to.equal('full');
    expect(cache.get('g', 'm1')!.epoch).to.equal(1);
    const next = cache.fetchContext('g', 'm1', 1, [p(T, 2)], [p(T, 0)], false, connection());
    expect(next.kind).to.equal('incremental');
    if (next.kind !== 'incremental') return;
    expect(next.partitions).to.deep.equal([p(T, 1), p(T, 2)]);
    expect(cache.get('g', 'm1')!.epoch).to.equal(2);
    // An incremental request naming nothing new fetches the whole session.
    const again = cache.fetchContext('g', 'm1', 2, [], [], true, connection());
    expect(again.kind === 'incremental' && again.partitions).to.deep.equal([p(T, 1), p(T, 2)]);
  });

  it('answers INVALID_SHARE_SESSION_EPOCH for an epoch not the next, SHARE_SESSION_NOT_FOUND without a session', () => {
    cache.fetchContext('g', 'm1', 0, [p(T, 0)], [], false, connection());
    expect(cache.fetchContext('g', 'm1', 5, [], [], false, connection())).to.deep.equal({ kind: 'error', errorCode: ErrorCode.INVALID_SHARE_SESSION_EPOCH });
    // A failed request does not move the epoch.
    expect(cache.fetchContext('g', 'm1', 1, [], [], false, connection()).kind).to.equal('incremental');
    expect(cache.fetchContext('g', 'other', 1, [], [], false, connection())).to.deep.equal({ kind: 'error', errorCode: ErrorCode.SHARE_SESSION_NOT_FOUND });
    expect(cache.fetchContext('g', 'other', -1, [], [], false, connection())).to.deep.equal({ kind: 'error', errorCode: ErrorCode.SHARE_SESSION_NOT_FOUND });
  });

  it('refuses acknowledgements in an epoch 0 request, and new sessions past group.share.max.share.sessions', () => {
    expect(cache.fetchContext('g', 'm1', 0, [p(T, 0)], [], true, connection())).to.deep.equal({ kind: 'error', errorCode: ErrorCode.INVALID_REQUEST });
    cache.fetchContext('g', 'm1', 0, [p(T, 0)], [], false, connection());
    cache.fetchContext('g', 'm2', 0, [p(T, 0)], [], false, connection());
    expect(cache.fetchContext('g', 'm3', 0, [p(T, 0)], [], false, connection())).to.deep.equal({ kind: 'error', errorCode: ErrorCode.SHARE_SESSION_LIMIT_REACHED });
    // A member opening its session again replaces its own: no new slot needed.
    expect(cache.fetchContext('g', 'm2', 0, [p(T, 1)], [], false, connection()).kind).to.equal('full');
    maxSessions = 3;
    expect(cache.fetchContext('g', 'm3', 0, [p(T, 0)], [], false, connection()).kind).to.equal('full');
  });

  it('ShareAcknowledge: epoch 0 is INVALID_SHARE_SESSION_EPOCH, the next epoch moves it on, FINAL leaves it to the caller', () => {
    cache.fetchContext('g', 'm1', 0, [p(T, 0)], [], false, connection());
    expect(cache.acknowledgeContext('g', 'm1', 0)).to.deep.equal({ errorCode: ErrorCode.INVALID_SHARE_SESSION_EPOCH });
    expect(cache.acknowledgeContext('g', 'm1', 2)).to.deep.equal({ errorCode: ErrorCode.INVALID_SHARE_SESSION_EPOCH });
    expect(cache.acknowledgeContext('g', 'x', 1)).to.deep.equal({ errorCode: ErrorCode.SHARE_SESSION_NOT_FOUND });
    expect('session' in cache.acknowledgeContext('g', 'm1', 1)).to.equal(true);
    expect(cache.get('g', 'm1')!.epoch).to.equal(2);
    expect('session' in cache.acknowledgeContext('g', 'm1', -1)).to.equal(true);
    expect(cache.get('g', 'm1')!.epoch).to.equal(2);
  });

  it('ends a session when the connection that opened it closes, unless the member opened another since', () => {
    const first = connection();
    cache.fetchContext('g', 'm1', 0, [p(T, 0)], [], false, first);
    const second = connection();
    cache.fetchContext('g', 'm2', 0, [p(T, 0)], [], false, second);
    // m2 opens a new session on another connection: closing the first one's does not end it.
    cache.fetchContext('g', 'm2', 0, [p(T, 1)], [], false, connection());
    expect(second.listeners).to.equal(0);
    second.close();
    first.close();
    expect(ended.map((s) => s.memberId)).to.deep.equal(['m1']);
    expect(cache.get('g', 'm1')).to.equal(undefined);
    expect(cache.get('g', 'm2')).to.not.equal(undefined);
    // A session ended by its FINAL request stops listening to its connection.
    const third = connection();
    cache.fetchContext('g', 'm3', 0, [p(T, 0)], [], false, third);
    expect(cache.remove('g', 'm3')?.memberId).to.equal('m3');
    expect(third.listeners).to.equal(0);
  });
});
