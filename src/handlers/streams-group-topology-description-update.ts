// StreamsGroupTopologyDescriptionUpdate (key 93), version 0: a streams group's topology
// description pushed to the broker's topology description plugin (KIP-1331). Fjord, as Kafka 4.4
// without such a plugin configured, stores none: UNSUPPORTED_VERSION with Kafka's message (after
// Kafka's other checks, which come later in its order). Heartbeats never ask for one (their
// TopologyDescriptionRequired is false), so Kafka Streams does not send it.
import { ErrorCode } from '../common/errors';
import { ApiKey } from '../protocol/generated';
import { defineHandler } from './handler';

export const streamsGroupTopologyDescriptionUpdate = defineHandler(ApiKey.StreamsGroupTopologyDescriptionUpdate, { minVersion: 0, maxVersion: 0 },
  () => () => ({
    throttleTimeMs: 0,
    errorCode: ErrorCode.UNSUPPORTED_VERSION,
    errorMessage: 'The broker has no streams group topology description plugin configured.',
  }));
