// Every API this broker serves. Adding a handler here is what puts its API in ApiVersions.
// BrokerServices is every handler's services together: what the broker must provide.
import type { Broker } from '../broker';
import type { ApiKey } from '../protocol/generated';
import type { ApiHandler, HandlerDefinition, HandlerFactory } from './handler';
import type { ProduceServices } from './produce';
import type { HeartbeatServices } from './heartbeat';
import type { FetchServices } from './fetch';
import type { ListOffsetsServices } from './list-offsets';
import type { OffsetForLeaderEpochServices } from './offset-for-leader-epoch';
import type { DeleteRecordsServices } from './delete-records';
import type { DescribeProducersServices } from './describe-producers';
import { alterConfigs } from './alter-configs';
import { apiVersions } from './api-versions';
import { createPartitions } from './create-partitions';
import { createTopics } from './create-topics';
import { deleteRecords } from './delete-records';
import { deleteTopics } from './delete-topics';
import { describeCluster } from './describe-cluster';
import { describeConfigs } from './describe-configs';
import { describeLogDirs } from './describe-log-dirs';
import { describeProducers } from './describe-producers';
import { fetch } from './fetch';
import { incrementalAlterConfigs } from './incremental-alter-configs';
import { initProducerId } from './init-producer-id';
import { listOffsets } from './list-offsets';
import { metadata } from './metadata';
import { offsetForLeaderEpoch } from './offset-for-leader-epoch';
import { produce } from './produce';
// Consumer groups (src/group): the classic group coordinator.
import { deleteGroups } from './delete-groups';
import { describeGroups } from './describe-groups';
import { findCoordinator } from './find-coordinator';
import { heartbeat } from './heartbeat';
import { joinGroup } from './join-group';
import { leaveGroup } from './leave-group';
import { listGroups } from './list-groups';
import { offsetCommit } from './offset-commit';
import { offsetDelete } from './offset-delete';
import { offsetFetch } from './offset-fetch';
import { syncGroup } from './sync-group';
import { txnOffsetCommit } from './txn-offset-commit';
// Transactions (src/txn): the transaction coordinator and the markers it writes.
import { addOffsetsToTxn } from './add-offsets-to-txn';
import { addPartitionsToTxn } from './add-partitions-to-txn';
import { describeTransactions } from './describe-transactions';
import { endTxn } from './end-txn';
import { listTransactions } from './list-transactions';
import { writeTxnMarkers } from './write-txn-markers';

export type BrokerServices = ProduceServices & HeartbeatServices
  & FetchServices & ListOffsetsServices & OffsetForLeaderEpochServices & DeleteRecordsServices & DescribeProducersServices;

/** Handlers bound to their services: what the router dispatches to. */
export function createHandlers(services: BrokerServices & Broker): ApiHandler[] {
  const definitions: HandlerDefinition<ApiKey, BrokerServices>[] = [produce, heartbeat,
    fetch, listOffsets, offsetForLeaderEpoch, deleteRecords, describeProducers];
  const servedApis = [apiVersions, ...definitions, ...legacy.map((make) => make(services))]
    .map(({ apiKey, minVersion, maxVersion }) => ({ apiKey, minVersion, maxVersion }))
    .sort((a, b) => a.apiKey - b.apiKey);
  return [apiVersions.bind({ servedApis }), ...definitions.map((d) => d.bind(services)), ...legacy.map((make) => make(services))];
}

// Transitional: handlers still bound to the whole Broker.
const legacy: HandlerFactory[] = [
  metadata,
  createTopics,
  deleteTopics,
  describeConfigs,
  alterConfigs,
  createPartitions,
  incrementalAlterConfigs,
  describeCluster,
  describeLogDirs,
  initProducerId,
  // consumer groups
  findCoordinator,
  joinGroup,
  syncGroup,
  leaveGroup,
  offsetCommit,
  offsetFetch,
  listGroups,
  describeGroups,
  deleteGroups,
  offsetDelete,
  txnOffsetCommit,
  // transactions
  addPartitionsToTxn,
  addOffsetsToTxn,
  endTxn,
  writeTxnMarkers,
  describeTransactions,
  listTransactions,
];
