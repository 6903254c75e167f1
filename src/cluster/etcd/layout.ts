/**
 * The cluster's metadata in etcd: the keys under the `etcd.connect` prefix and their JSON values.
 * It mirrors Kafka's ZooKeeper layout (brokers/ids, controller, controller_epoch, topics, partition
 * state), flattened so that one watch on the prefix tells a broker everything:
 *
 *   /brokers/ids/<id>                    leased by that broker: BrokerRegistration
 *   /controller                          leased by the controller's broker: ControllerRecord
 *   /controller_epoch                    the last controller epoch, a decimal number (never leased)
 *   /cluster_id                          the cluster's id, set by the first broker (Kafka's /cluster/id)
 *   /producer_ids_end                    the end of the last block of producer ids handed out
 *   /features                            the finalized feature levels, {name: level} (set by the first broker)
 *   /topics/<name>                       TopicAssignment: id, replica assignment, config overrides,
 *                                        reassignments in progress
 *   /partitions/<topicId>/<n>/state      PartitionState, less partitionEpoch (see below)
 *   /group_configs/<groupId>             a group's config overrides (GROUP config resources), raw strings;
 *                                        the id URI-encoded, as a group id may hold '/'
 *   /configs/brokers/<id>                a broker's dynamic configs (BROKER config resource "<id>"), raw strings
 *   /configs/brokers/<default>           the cluster-wide dynamic broker configs (BROKER config resource "")
 *   /quotas/<entity>                     a client quota entity's values, {key: number}; <entity> is its
 *                                        path (users/<u>/clients/<c>, clients/<default>: client-quotas.ts)
 *   /acls/<binding>                      one ACL (CreateAcls): its AclBinding, the key its fields URI-encoded,
 *                                        so that creating an ACL twice writes one key and deleting it is one delete
 *
 * A partition's partitionEpoch is not stored: it is its state key's etcd version less one, so it
 * starts at 0 and every write bumps it, and a write conditioned on it is a single compare on the
 * key's version — as Kafka's ZooKeeper mode used the znode version of the state. States are keyed
 * by topic id, as KRaft keys them: a topic deleted and created again under the same name starts
 * new keys, so no write meant for the old topic can match an epoch of the new one.
 */
import type { Endpoint } from '../../config/broker-config';
import { bindingKey, type AclBinding } from '../../security/acl-binding';

export interface BrokerRegistration {
  brokerId: number;
  /** Random per broker process: tells a restarted broker from a second broker with the same id. */
  incarnationId: string;
  endpoints: Endpoint[];
  rack: string | null;
  /** The feature versions it supports (Kafka's registration has them); absent: a broker from before features. */
  supportedFeatures?: { name: string; minVersion: number; maxVersion: number }[];
}

export interface ControllerRecord {
  brokerId: number;
  /** The epoch this controller won with; it fences every write it makes. */
  epoch: number;
  incarnationId: string;
}

export interface TopicAssignment {
  name: string;
  /** 32 lowercase hex chars, as the MetadataStore's topic ids. */
  id: string;
  /** replicas[partition]: the broker ids holding that partition, preferred leader first. */
  replicas: number[][];
  /** Topic config overrides, raw strings. */
  configs: Record<string, string>;
  /**
   * The partitions being reassigned, by partition index (absent: none). Meanwhile replicas[partition]
   * is the full set, target first then the replicas being removed, as Kafka's PartitionRecord has it.
   */
  reassignments?: Record<string, PartitionReassignment>;
}

/** A reassignment in progress (Kafka's addingReplicas / removingReplicas); one of the two is not empty. */
export interface PartitionReassignment {
  adding: number[];
  removing: number[];
}

/** Kafka's LeaderAndIsr. leader -1: no leader. */
export interface PartitionState {
  leader: number;
  leaderEpoch: number;
  isr: number[];
  partitionEpoch: number;
}

export const CONTROLLER_KEY = '/controller';
export const CONTROLLER_EPOCH_KEY = '/controller_epoch';
export const CLUSTER_ID_KEY = '/cluster_id';
export const PRODUCER_IDS_END_KEY = '/producer_ids_end';
export const FEATURES_KEY = '/features';
export const brokerKey = (id: number): string => `/brokers/ids/${id}`;
export const topicKey = (name: string): string => `/topics/${name}`;
/** Every partition state of a topic lives under this; deleting a topic deletes the range. */
export const topicPartitionsPrefix = (topicId: string): string => `/partitions/${topicId}/`;
export const partitionStateKey = (topicId: string, partition: number): string =>
  `${topicPartitionsPrefix(topicId)}${partition}/state`;
export const groupConfigsKey = (groupId: string): string => `/group_configs/${encodeURIComponent(groupId)}`;
/** The key of a BROKER config resource: "" (the cluster-wide default) is `<default>`, as Kafka's ZooKeeper layout had it. */
export const brokerConfigsKey = (resource: string): string => `/configs/brokers/${resource === '' ? '<default>' : resource}`;
/** An ACL's key: the binding itself, so that equal bindings share it. */
export const aclKey = (binding: AclBinding): string => `/acls/${encodeURIComponent(bindingKey(binding))}`;

/** The key of a client quota entity (its entityKey, client-quotas.ts). */
export const clientQuotaKey = (entity: string): string => `/quotas/${entity}`;
const CLIENT_QUOTA_PREFIX = '/quotas/';
/** A user's SCRAM credentials (StoredScramCredentials): the user URI-encoded, as it may hold '/'. */
export const scramCredentialsKey = (user: string): string => `/scram/${encodeURIComponent(user)}`;

/** What one key of the layout is (topic names and ids never hold '/', so the patterns are unambiguous). */
export type MetadataKey =
  | { kind: 'broker'; brokerId: number }
  | { kind: 'controller' }
  | { kind: 'controllerEpoch' }
  | { kind: 'features' }
  | { kind: 'topic'; name: string }
  | { kind: 'partitionState'; topicId: string; partition: number }
  | { kind: 'groupConfigs'; groupId: string }
  | { kind: 'brokerConfigs'; resource: string }
  | { kind: 'clientQuota'; entity: string }
  | { kind: 'scramCredentials'; user: string }
  | { kind: 'acl'; key: string };

const BROKER_RE = /^\/brokers\/ids\/(\d+)$/;
const TOPIC_RE = /^\/topics\/([^/]+)$/;
const PARTITION_RE = /^\/partitions\/([^/]+)\/(\d+)\/state$/;
const GROUP_CONFIGS_RE = /^\/group_configs\/([^/]+)$/;
const BROKER_CONFIGS_RE = /^\/configs\/brokers\/(\d+|<default>)$/;
const SCRAM_CREDENTIALS_RE = /^\/scram\/([^/]+)$/;
const ACL_RE = /^\/acls\/([^/]+)$/;

/** Parses a key (prefix already removed); null for a key that is not ours. */
export function parseMetadataKey(key: string): MetadataKey | null {
  if (key === CONTROLLER_KEY) return { kind: 'controller' };
  if (key === CONTROLLER_EPOCH_KEY) return { kind: 'controllerEpoch' };
  if (key === FEATURES_KEY) return { kind: 'features' };
  let m = BROKER_RE.exec(key);
  if (m) return { kind: 'broker', brokerId: Number(m[1]) };
  m = TOPIC_RE.exec(key);
  if (m) return { kind: 'topic', name: m[1] };
  m = PARTITION_RE.exec(key);
  if (m) return { kind: 'partitionState', topicId: m[1], partition: Number(m[2]) };
  m = GROUP_CONFIGS_RE.exec(key);
  if (m) return { kind: 'groupConfigs', groupId: decodeURIComponent(m[1]) };
  m = BROKER_CONFIGS_RE.exec(key);
  if (m) return { kind: 'brokerConfigs', resource: m[1] === '<default>' ? '' : m[1] };
  if (key.startsWith(CLIENT_QUOTA_PREFIX)) return { kind: 'clientQuota', entity: key.slice(CLIENT_QUOTA_PREFIX.length) };
  m = SCRAM_CREDENTIALS_RE.exec(key);
  if (m) return { kind: 'scramCredentials', user: decodeURIComponent(m[1]) };
  m = ACL_RE.exec(key);
  if (m) return { kind: 'acl', key: m[1] };
  return null;
}

/** The stored form of a partition state: partitionEpoch is the key's version (see above). */
export function encodePartitionState(state: Omit<PartitionState, 'partitionEpoch'>): string {
  return JSON.stringify({ leader: state.leader, leaderEpoch: state.leaderEpoch, isr: state.isr });
}

export function decodePartitionState(value: string, version: number): PartitionState {
  const stored = JSON.parse(value) as Omit<PartitionState, 'partitionEpoch'>;
  return { leader: stored.leader, leaderEpoch: stored.leaderEpoch, isr: stored.isr, partitionEpoch: version - 1 };
}
