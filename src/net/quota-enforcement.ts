// What each request counts against the client quotas (cluster/client-quota-manager.ts), as Kafka's
// KafkaApis records it, and how a throttle shows to the client (KIP-219). Called by the connection
// once a handler has its response, only while some quota is configured (ClientQuotas.enabled):
// - every request: its handler's time on the event loop (and its response's encoding), as a share
//   of one thread, against request_percentage; Kafka's exempt ones are not counted (SASL frames,
//   transaction markers from other brokers, followers' fetches);
// - Produce: the request's size against producer_byte_rate (request time too, unless acks=0);
// - Fetch from a consumer: its response's record bytes against consumer_byte_rate. A throttled
//   fetch is answered empty and its bytes taken back, as Kafka's getThrottledResponse does.
// - CreateTopics, CreatePartitions, DeleteTopics: the throttle their handlers found against
//   controller_mutation_rate (cluster/client-quota-manager.ts MutationQuota), with the request time's.
// The throttle time is the larger of the two; the response carries it in throttle_time_ms. A client
// that speaks a version from KIP-219 on backs off itself: the response goes at once and the
// connection reads nothing for that time. An older version's response is held back for it instead.
import { ApiKey } from '../protocol/generated';
import type { ProduceRequest } from '../protocol/generated/ProduceRequest';
import type { FetchRequest } from '../protocol/generated/FetchRequest';
import type { FetchResponse } from '../protocol/generated/FetchResponse';
import type { ClientQuotas } from '../cluster/client-quota-manager';
import type { Session } from '../security/principal';

/** The first version of each API whose client throttles itself (KIP-219); unlisted: every version. */
const CLIENT_THROTTLES_FROM: Partial<Record<number, number>> = {
  [ApiKey.Produce]: 6, [ApiKey.Fetch]: 8, [ApiKey.ListOffsets]: 3, [ApiKey.Metadata]: 6, [ApiKey.OffsetCommit]: 4,
  [ApiKey.OffsetFetch]: 4, [ApiKey.FindCoordinator]: 2, [ApiKey.JoinGroup]: 3, [ApiKey.Heartbeat]: 2, [ApiKey.LeaveGroup]: 2,
  [ApiKey.SyncGroup]: 2, [ApiKey.DescribeGroups]: 2, [ApiKey.ListGroups]: 2, [ApiKey.ApiVersions]: 2, [ApiKey.CreateTopics]: 3,
  [ApiKey.DeleteTopics]: 2, [ApiKey.DeleteRecords]: 1, [ApiKey.InitProducerId]: 1, [ApiKey.OffsetForLeaderEpoch]: 2,
  [ApiKey.AddPartitionsToTxn]: 1, [ApiKey.AddOffsetsToTxn]: 1, [ApiKey.EndTxn]: 1, [ApiKey.TxnOffsetCommit]: 1,
  [ApiKey.DescribeAcls]: 1, [ApiKey.CreateAcls]: 1, [ApiKey.DeleteAcls]: 1, [ApiKey.DescribeConfigs]: 2, [ApiKey.AlterConfigs]: 1,
  [ApiKey.AlterReplicaLogDirs]: 1, [ApiKey.DescribeLogDirs]: 1, [ApiKey.CreatePartitions]: 1, [ApiKey.DeleteGroups]: 1,
};

/** APIs Kafka never counts against request quotas (SASL, inter-broker cluster actions). */
const EXEMPT = new Set<number>([ApiKey.SaslHandshake, ApiKey.SaslAuthenticate, ApiKey.WriteTxnMarkers]);

/** APIs whose handlers charge the controller mutation quota and put its throttle in their response. */
const MUTATIONS = new Set<number>([ApiKey.CreateTopics, ApiKey.CreatePartitions, ApiKey.DeleteTopics]);

export function clientThrottles(apiKey: number, apiVersion: number): boolean {
  return apiVersion >= (CLIENT_THROTTLES_FROM[apiKey] ?? 0);
}

/** What the connection knows of a request once answered. */
export interface AnsweredRequest {
  apiKey: number;
  apiVersion: number;
  session: Session;
  clientId: string | null;
  request: unknown;
  /** Null: none is sent (acks=0 produce). */
  response: unknown;
  /** The request's frame size (Kafka's request.sizeInBytes). */
  frameBytes: number;
  /** Time the handler held the event loop, and the response's encoding, in ms. */
  threadMs: number;
}

/**
 * Records the request against its quotas and answers its throttle time (0: none); a throttled
 * response is given its throttle_time_ms here (and a throttled fetch emptied) before it is encoded.
 */
export function recordAndThrottle(quotas: ClientQuotas, r: AnsweredRequest): number {
  if (EXEMPT.has(r.apiKey)) return 0;
  const user = r.session.principal.name;
  const clientId = r.clientId ?? '';
  const percent = r.threadMs / 10; // ms on one thread, as percent-seconds (Kafka's nanosToPercentage)
  let throttleMs: number;
  switch (r.apiKey) {
    case ApiKey.Produce: {
      const produce = r.request as ProduceRequest;
      throttleMs = quotas.produce.active ? quotas.produce.recordAndGetThrottleMs(user, clientId, r.frameBytes) : 0;
      if (produce.acks !== 0 && quotas.request.active) throttleMs = Math.max(throttleMs, quotas.request.recordAndGetThrottleMs(user, clientId, percent));
      break;
    }
    case ApiKey.Fetch: {
      const fetch = r.request as FetchRequest;
      if ((fetch.replicaState?.replicaId ?? fetch.replicaId ?? -1) >= 0) return 0;
      const response = r.response as FetchResponse;
      const bytes = quotas.fetch.active ? recordBytes(response) : 0;
      const fetchThrottle = quotas.fetch.active ? quotas.fetch.recordAndGetThrottleMs(user, clientId, bytes) : 0;
      const requestThrottle = quotas.request.active ? quotas.request.recordAndGetThrottleMs(user, clientId, percent) : 0;
      throttleMs = Math.max(fetchThrottle, requestThrottle);
      if (throttleMs > 0) {
        if (quotas.fetch.active) quotas.fetch.unrecord(user, clientId, bytes);
        response.responses = [];
      }
      break;
    }
    default:
      throttleMs = quotas.request.active ? quotas.request.recordAndGetThrottleMs(user, clientId, percent) : 0;
      // The topic handlers answered their controller mutation quota's throttle (ControllerMutationQuota).
      if (MUTATIONS.has(r.apiKey)) throttleMs = Math.max(throttleMs, (r.response as { throttleTimeMs: number }).throttleTimeMs);
  }
  if (throttleMs > 0 && r.response !== null && typeof r.response === 'object' && 'throttleTimeMs' in r.response) {
    const response = r.response as { throttleTimeMs: number };
    response.throttleTimeMs = Math.max(response.throttleTimeMs, throttleMs);
  }
  return throttleMs;
}

function recordBytes(response: FetchResponse): number {
  let bytes = 0;
  for (const t of response.responses) for (const p of t.partitions) bytes += p.records?.length ?? 0;
  return bytes;
}
