// The share groups' initializer over a Persister: new share-partitions are initialized at the group
// epoch with start offset -1; those the share coordinator holds state for (a restarted broker's
// groups joining again) are left as they are; a refused initialization fails the whole of it.
import { expect } from 'chai';
import { ErrorCode } from '../../src/common/errors';
import type { Persister, SharePartitionKey, StateSummary } from '../../src/share-state/persister';
import { shareStateInitializer } from '../../src/share-state/group-state-initializer';

const UNKNOWN: StateSummary = { errorCode: ErrorCode.NONE, errorMessage: null, stateEpoch: 0, leaderEpoch: 0, startOffset: -1n, deliveryCompleteCount: -1 };

/** The two calls the initializer makes, over a map of stored summaries. */
function persister(stored: Map<number, StateSummary>, initializeError: number = ErrorCode.NONE) {
  const initialized: [SharePartitionKey, number, bigint][] = [];
  const p: Pick<Persister, 'initialize' | 'readSummary'> = {
    readSummary: (key) => Promise.resolve(stored.get(key.partition) ?? UNKNOWN),
    initialize: (key, stateEpoch, startOffset) => {
      initialized.push([key, stateEpoch, startOffset]);
      return Promise.resolve({ errorCode: initializeError, errorMessage: null });
    },
  };
  return { p, initialized };
}

describe('share groups\' share-state initializer', () => {
  it('initializes the partitions without state at the group epoch, start offset -1, and leaves those with state alone', async () => {
    const { p, initialized } = persister(new Map([
      [1, { ...UNKNOWN, stateEpoch: 3, startOffset: 42n, deliveryCompleteCount: 0 }],
      [2, { ...UNKNOWN, stateEpoch: 1 }],
    ]));
    await shareStateInitializer(p)('g', 5, [{ topicId: 'a'.repeat(32), partitions: [0, 1, 2] }]);
    expect(initialized).to.deep.equal([[{ groupId: 'g', topicId: 'a'.repeat(32), partition: 0 }, 5, -1n]]);
  });

  it('initializes when the summary cannot be read, and fails when the share coordinator refuses the initialization', async () => {
    const unread = persister(new Map([[0, { ...UNKNOWN, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION }]]));
    await shareStateInitializer(unread.p)('g', 1, [{ topicId: 'b'.repeat(32), partitions: [0] }]);
    expect(unread.initialized).to.have.length(1);
    const refused = persister(new Map(), ErrorCode.FENCED_STATE_EPOCH);
    const failed = await shareStateInitializer(refused.p)('g', 1, [{ topicId: 'b'.repeat(32), partitions: [0] }]).then(() => false, () => true);
    expect(failed).to.equal(true);
  });
});
