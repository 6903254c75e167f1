// Every API this broker serves. Adding a handler here is what puts its API in ApiVersions.
import type { HandlerFactory } from '../router';
import { alterConfigs } from './alter-configs';
import { apiVersions } from './api-versions';
import { createPartitions } from './create-partitions';
import { createTopics } from './create-topics';
import { deleteTopics } from './delete-topics';
import { describeCluster } from './describe-cluster';
import { describeConfigs } from './describe-configs';
import { fetch } from './fetch';
import { incrementalAlterConfigs } from './incremental-alter-configs';
import { metadata } from './metadata';
import { produce } from './produce';

export const handlers: HandlerFactory[] = [
  produce,
  fetch,
  metadata,
  apiVersions,
  createTopics,
  deleteTopics,
  describeConfigs,
  alterConfigs,
  createPartitions,
  incrementalAlterConfigs,
  describeCluster,
];
