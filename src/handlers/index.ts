// Every API this broker serves. Adding a handler here is what puts its API in ApiVersions.
// BrokerServices is every handler's services together: what the broker must provide.
import type { Broker } from '../broker';
import type { ApiKey } from '../protocol/generated';
import type { ApiHandler, HandlerDefinition, HandlerFactory } from './handler';
import type { AddOffsetsToTxnServices } from './add-offsets-to-txn';
import type { AddPartitionsToTxnServices } from './add-partitions-to-txn';
import type { AlterConfigsServices } from './alter-configs';
import type { CreatePartitionsServices } from './create-partitions';
import type { CreateTopicsServices } from './create-topics';
import type { DeleteGroupsServices } from './delete-groups';
import type { DeleteTopicsServices } from './delete-topics';
import type { DescribeClusterServices } from './describe-cluster';
import type { DescribeConfigsServices } from './describe-configs';
import type { DescribeGroupsServices } from './describe-groups';
import type { DescribeLogDirsServices } from './describe-log-dirs';
import type { DescribeTransactionsServices } from './describe-transactions';
import type { EndTxnServices } from './end-txn';
import type { FindCoordinatorServices } from './find-coordinator';
import type { HeartbeatServices } from './heartbeat';
import type { IncrementalAlterConfigsServices } from './incremental-alter-configs';
import type { InitProducerIdServices } from './init-producer-id';
import type { JoinGroupServices } from './join-group';
import type { LeaveGroupServices } from './leave-group';
import type { ListGroupsServices } from './list-groups';
import type { ListTransactionsServices } from './list-transactions';
import type { MetadataServices } from './metadata';
import type { OffsetCommitServices } from './offset-commit';
import type { OffsetDeleteServices } from './offset-delete';
import type { OffsetFetchServices } from './offset-fetch';
import type { ProduceServices } from './produce';
import type { SyncGroupServices } from './sync-group';
import type { TxnOffsetCommitServices } from './txn-offset-commit';
import type { WriteTxnMarkersServices } from './write-txn-markers';
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

export type BrokerServices =
  ProduceServices & MetadataServices & CreateTopicsServices & DeleteTopicsServices & DescribeConfigsServices
  & AlterConfigsServices & CreatePartitionsServices & IncrementalAlterConfigsServices & DescribeClusterServices
  & DescribeLogDirsServices & InitProducerIdServices
  // consumer groups
  & FindCoordinatorServices & JoinGroupServices & HeartbeatServices & SyncGroupServices & LeaveGroupServices
  & OffsetCommitServices & OffsetFetchServices & ListGroupsServices & DescribeGroupsServices & DeleteGroupsServices
  & OffsetDeleteServices & TxnOffsetCommitServices
  // transactions
  & AddPartitionsToTxnServices & AddOffsetsToTxnServices & EndTxnServices & WriteTxnMarkersServices
  & DescribeTransactionsServices & ListTransactionsServices;

/** Handlers bound to their services: what the router dispatches to. */
export function createHandlers(services: BrokerServices & Broker): ApiHandler[] {
  const definitions: HandlerDefinition<ApiKey, BrokerServices>[] = [
    produce,
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
    heartbeat,
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
  const servedApis = [apiVersions, ...definitions, ...legacy.map((make) => make(services))]
    .map(({ apiKey, minVersion, maxVersion }) => ({ apiKey, minVersion, maxVersion }))
    .sort((a, b) => a.apiKey - b.apiKey);
  return [apiVersions.bind({ servedApis }), ...definitions.map((d) => d.bind(services)), ...legacy.map((make) => make(services))];
}

// Transitional: handlers still bound to the whole Broker.
const legacy: HandlerFactory[] = [
  fetch,
  listOffsets,
  offsetForLeaderEpoch,
  deleteRecords,
  describeProducers,
];
