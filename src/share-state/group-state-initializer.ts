// How the group coordinator's share groups initialize their share-partitions at the share
// coordinator (Kafka's GroupCoordinatorService.persisterInitialize): InitializeShareGroupState at
// the group epoch with start offset -1, for share.auto.offset.reset to decide where each starts.
//
// Fjord keeps share groups' membership in memory, so after a restart a group learns again which
// of its share-partitions have state: a partition the share coordinator already holds state for
// is not initialized again (that would drop its acknowledgements), only read (ReadShareGroupStateSummary).
import { ErrorCode, errorMessage } from '../common/errors';
import type { ShareStateInitializer } from '../group/coordinator';
import type { Persister } from './persister';

const UNINITIALIZED_START_OFFSET = -1n;

export function shareStateInitializer(persister: Pick<Persister, 'initialize' | 'readSummary'>): ShareStateInitializer {
  return async (groupId, stateEpoch, topics) => {
    const keys = topics.flatMap((t) => t.partitions.map((partition) => ({ groupId, topicId: t.topicId, partition })));
    const codes = await Promise.all(keys.map(async (key) => {
      const summary = await persister.readSummary(key, 0);
      // Unknown to the share coordinator: state epoch 0 and start offset -1. A summary that cannot be
      // read leaves it to the initialization, whose error (if any) is the answer.
      if (summary.errorCode === ErrorCode.NONE && (summary.stateEpoch > 0 || summary.startOffset >= 0n)) return ErrorCode.NONE;
      return (await persister.initialize(key, stateEpoch, UNINITIALIZED_START_OFFSET)).errorCode;
    }));
    const failed = codes.find((c) => c !== ErrorCode.NONE);
    if (failed !== undefined) throw new Error(`InitializeShareGroupState failed: ${errorMessage(failed)}`);
  };
}
