// Every API this broker serves. Adding a handler to `definitions` is what puts its API in
// ApiVersions and its services in BrokerServices: what the broker must provide.
import type { ApiKey } from '../protocol/generated';
import type { ApiHandler, HandlerDefinition } from './handler';
import { apiVersions, type ApiVersionsServices } from './api-versions';
// Topics, records and the cluster.
import { produce } from './produce';
import { fetch } from './fetch';
import { listOffsets } from './list-offsets';
import { metadata } from './metadata';
import { offsetForLeaderEpoch } from './offset-for-leader-epoch';
import { createTopics } from './create-topics';
import { deleteTopics } from './delete-topics';
import { deleteRecords } from './delete-records';
import { createPartitions } from './create-partitions';
import { describeConfigs } from './describe-configs';
import { alterConfigs } from './alter-configs';
import { incrementalAlterConfigs } from './incremental-alter-configs';
import { describeCluster } from './describe-cluster';
import { describeLogDirs } from './describe-log-dirs';
import { alterReplicaLogDirs } from './alter-replica-log-dirs';
import { describeTopicPartitions } from './describe-topic-partitions';
import { describeProducers } from './describe-producers';
import { initProducerId } from './init-producer-id';
import { updateFeatures } from './update-features';
import { electLeaders } from './elect-leaders';
import { alterPartitionReassignments } from './alter-partition-reassignments';
import { listPartitionReassignments } from './list-partition-reassignments';
// Consumer groups (src/group): classic groups and consumer groups (KIP-848).
import { findCoordinator } from './find-coordinator';
import { joinGroup } from './join-group';
import { syncGroup } from './sync-group';
import { heartbeat } from './heartbeat';
import { leaveGroup } from './leave-group';
import { offsetCommit } from './offset-commit';
import { offsetFetch } from './offset-fetch';
import { listGroups } from './list-groups';
import { describeGroups } from './describe-groups';
import { deleteGroups } from './delete-groups';
import { offsetDelete } from './offset-delete';
import { txnOffsetCommit } from './txn-offset-commit';
import { consumerGroupHeartbeat } from './consumer-group-heartbeat';
import { consumerGroupDescribe } from './consumer-group-describe';
import { streamsGroupHeartbeat } from './streams-group-heartbeat';
import { streamsGroupDescribe } from './streams-group-describe';
import { streamsGroupTopologyDescriptionUpdate } from './streams-group-topology-description-update';
// Share groups' membership (KIP-932).
import { shareGroupHeartbeat } from './share-group-heartbeat';
import { shareGroupDescribe } from './share-group-describe';
// Transactions (src/txn): the transaction coordinator and the markers it writes.
import { addPartitionsToTxn } from './add-partitions-to-txn';
import { addOffsetsToTxn } from './add-offsets-to-txn';
import { endTxn } from './end-txn';
import { writeTxnMarkers } from './write-txn-markers';
import { describeTransactions } from './describe-transactions';
import { listTransactions } from './list-transactions';
import { listConfigResources } from './list-config-resources';
// The share coordinator (src/share-state): share-partitions' durable state, broker to broker.
import { initializeShareGroupState } from './initialize-share-group-state';
import { readShareGroupState } from './read-share-group-state';
import { writeShareGroupState } from './write-share-group-state';
import { deleteShareGroupState } from './delete-share-group-state';
import { readShareGroupStateSummary } from './read-share-group-state-summary';
// Client quotas (src/cluster/client-quotas.ts); enforced by the connection (src/net/client-quota-enforcement.ts).
import { describeClientQuotas } from './describe-client-quotas';
import { alterClientQuotas } from './alter-client-quotas';
// ACLs: no authorizer yet, so SECURITY_DISABLED as Kafka answers without one.
import { describeAcls } from './describe-acls';
import { createAcls } from './create-acls';
import { deleteAcls } from './delete-acls';
// Share groups' admin (src/share/share-group-admin.ts).
import { describeShareGroupOffsets } from './describe-share-group-offsets';
import { alterShareGroupOffsets } from './alter-share-group-offsets';
import { deleteShareGroupOffsets } from './delete-share-group-offsets';
// SASL: the exchange itself is the connection's (src/net/sasl-authenticator.ts).
import { saslHandshake } from './sasl-handshake';
import { saslAuthenticate } from './sasl-authenticate';
// SCRAM users (src/security/scram.ts), kept with the cluster metadata.
import { describeUserScramCredentials } from './describe-user-scram-credentials';
import { alterUserScramCredentials } from './alter-user-scram-credentials';
// Share groups' fetch path (KIP-932; src/share/share-partition-manager.ts).
import { shareFetch } from './share-fetch';
import { shareAcknowledge } from './share-acknowledge';

const definitions = [
  produce, fetch, listOffsets, metadata, offsetForLeaderEpoch, createTopics, deleteTopics, deleteRecords,
  createPartitions, describeConfigs, alterConfigs, incrementalAlterConfigs, describeCluster, describeLogDirs, alterReplicaLogDirs,
  describeProducers, initProducerId, describeTopicPartitions, updateFeatures, electLeaders,
  alterPartitionReassignments, listPartitionReassignments,
  findCoordinator, joinGroup, syncGroup, heartbeat, leaveGroup, offsetCommit, offsetFetch, listGroups,
  describeGroups, deleteGroups, offsetDelete, txnOffsetCommit, consumerGroupHeartbeat, consumerGroupDescribe,
  streamsGroupHeartbeat, streamsGroupDescribe, streamsGroupTopologyDescriptionUpdate,
  shareGroupHeartbeat, shareGroupDescribe,
  addPartitionsToTxn, addOffsetsToTxn, endTxn, writeTxnMarkers, describeTransactions, listTransactions,
  listConfigResources, describeClientQuotas, alterClientQuotas,
  describeAcls, createAcls, deleteAcls,
  saslHandshake, saslAuthenticate,
  describeUserScramCredentials, alterUserScramCredentials,
  describeShareGroupOffsets, alterShareGroupOffsets, deleteShareGroupOffsets,
  shareFetch, shareAcknowledge,
  initializeShareGroupState, readShareGroupState, writeShareGroupState, deleteShareGroupState, readShareGroupStateSummary,
] as const;

// A handler that needs no services has them as `unknown`, which would swallow the whole union (and
// BrokerServices with it): it counts as needing nothing.
type ServicesOf<D> = D extends HandlerDefinition<ApiKey, infer S> ? (unknown extends S ? object : S) : never;
type Intersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never;

/** Every handler's services together (the intersection of their interfaces); ApiVersions' list is made here. */
export type BrokerServices = Intersection<ServicesOf<(typeof definitions)[number]>> & Omit<ApiVersionsServices, 'servedApis'>;

/** Handlers bound to their services: what the router dispatches to. */
export function createHandlers(services: BrokerServices): ApiHandler[] {
  // Each definition is its API's key and version range: the list ApiVersions answers with.
  const servedApis = [apiVersions, ...definitions].sort((a, b) => a.apiKey - b.apiKey);
  return [apiVersions.bind({ servedApis, features: services.features, clusterId: services.clusterId, nodeId: services.nodeId }), ...definitions.map((d: HandlerDefinition<ApiKey, BrokerServices>) => d.bind(services))];
}
