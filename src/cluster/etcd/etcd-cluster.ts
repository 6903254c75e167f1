/**
 * One broker's membership of a cluster whose control plane is etcd (the role ZooKeeper had in
 * Kafka before KRaft): its registration, the controller election, fenced controller writes,
 * partition-state updates conditioned on the partition epoch, and the watch-driven metadata cache.
 *
 * - Registration (Kafka's /brokers/ids/<id>): a key held by the broker's lease, whose TTL is
 *   broker.session.timeout.ms rounded up to whole seconds and which the client keeps alive. A live
 *   registration of the same id refuses the next one (Kafka's DUPLICATE_BROKER_REGISTRATION).
 * - Election (Kafka's /controller + /controller_epoch): whenever no controller is registered, every
 *   broker tries one transaction that creates /controller under its own lease and bumps
 *   /controller_epoch, conditioned on both being as it read them; exactly one wins. The key goes
 *   with the lease, so a dead controller's broker frees it and the others campaign again.
 * - Fencing: every controller write is one transaction conditioned on /controller_epoch still
 *   holding the epoch it won with and /controller still being held by its lease, so a deposed
 *   controller (or one whose session lapsed) can change nothing.
 * - Partition state (Kafka's AlterPartition rule): an update names the partitionEpoch it was
 *   computed from; a stale one is refused and the caller gets the current state to retry from.
 * - Topic writes (CreateTopics, DeleteTopics, CreatePartitions, AlterConfigs) come from any broker,
 *   as AdminZkClient wrote /brokers/topics in ZooKeeper mode, unfenced but conditioned on the topic
 *   key's mod revision; the controller reacts to them through the cache (cluster-controller.ts).
 *
 * Lease loss (etcd says the lease is gone, or no keepalive got through for twice its TTL) ends the
 * session: the broker is no longer registered nor controller and 'sessionLost' is emitted. It then
 * starts a new session as Kafka's brokers did after a ZooKeeper session expired: a new lease, the
 * registration written again under it (retried until etcd answers), and 'sessionRenewed'.
 */
import { ExponentialBackoff } from 'cockatiel';
import { randomUUID } from 'crypto';
import { EventEmitter } from 'events';
import { Etcd3, type Lease, type Namespace } from 'etcd3';
import type { Logger } from '../../common/logger';
import type { Endpoint } from '../../config/broker-config';
import type { EtcdConnect } from '../../config/etcd-connect';
import {
  CLUSTER_ID_KEY,
  FEATURES_KEY,
  PRODUCER_IDS_END_KEY,
  CONTROLLER_EPOCH_KEY,
  CONTROLLER_KEY,
  brokerKey,
  decodePartitionState,
  encodePartitionState,
  groupConfigsKey,
  brokerConfigsKey,
  clientQuotaKey,
  scramCredentialsKey,
  aclKey,
  partitionStateKey,
  topicKey,
  topicPartitionsPrefix,
  type BrokerRegistration,
  type ControllerRecord,
  type PartitionState,
  type TopicAssignment,
} from './layout';
import { MetadataCache } from './metadata-cache';
import { storeScramCredentials, type UserScramCredentials } from '../../security/scram';
import type { AclBinding } from '../../security/acl-binding';

export interface EtcdClusterOptions {
  connect: EtcdConnect;
  nodeId: number;
  /** The broker's advertised listeners, as clients and other brokers reach it. */
  endpoints: Endpoint[];
  rack?: string | null;
  /** The feature versions this broker supports, registered for UpdateFeatures' checks on every broker. */
  supportedFeatures?: BrokerRegistration['supportedFeatures'];
  /** broker.session.timeout.ms: the registration lease's TTL (rounded up to whole seconds). */
  sessionTimeoutMs: number;
  /** Deadline of each etcd request (default 5000 ms). */
  requestTimeoutMs?: number;
  logger?: Logger;
}

/** Another live broker holds this node id (Kafka's DUPLICATE_BROKER_REGISTRATION). */
export class DuplicateBrokerError extends Error {
  constructor(readonly brokerId: number, readonly registered: BrokerRegistration) {
    super(`Broker id ${brokerId} is already registered by another live broker (incarnation ` +
      `${registered.incarnationId}); a broker id must be unique in the cluster`);
    this.name = 'DuplicateBrokerError';
  }
}

/** A controller write refused because this broker is not (or no longer) the controller. */
export class NotControllerError extends Error {
  constructor(readonly brokerId: number, readonly epoch: number | null) {
    super(epoch === null
      ? `Broker ${brokerId} is not the controller`
      : `Broker ${brokerId} is no longer the controller: its epoch ${epoch} was fenced`);
    this.name = 'NotControllerError';
  }
}

/** One change (or condition) in a controller write. */
export type ControllerOp =
  | { type: 'putTopic'; topic: TopicAssignment }
  /** Writes nothing: the transaction applies only if the topic's key is still at this mod revision (as computed from). */
  | { type: 'topicUnchanged'; name: string; modRevision: number }
  /** Deletes the topic and every partition state under its id. */
  | { type: 'deleteTopic'; name: string; topicId: string }
  /** Writes a partition state, conditioned on `expectedPartitionEpoch` (-1: must not exist yet). */
  | {
    type: 'putPartitionState'; topicId: string; partition: number; expectedPartitionEpoch: number;
    state: Omit<PartitionState, 'partitionEpoch'>;
  };

export type PartitionUpdateResult =
  | { ok: true; state: PartitionState }
  /** current: the state now in etcd (null: the partition has none) to retry from. */
  | { ok: false; current: PartitionState | null };

/** The etcd lease TTL for a session timeout: whole seconds, rounded up, at least 1. */
export function leaseTtlSeconds(sessionTimeoutMs: number): number {
  return Math.max(1, Math.ceil(sessionTimeoutMs / 1000));
}

const CAMPAIGN_RETRY_MS = 200;
/** etcd's default --max-txn-ops: the most operations one transaction may hold. */
const MAX_TXN_OPS = 128;
/** Pause between attempts to register again after a lost session. */
const SESSION_RETRY_MS = 1000;

export class EtcdCluster extends EventEmitter {
  /** Random for this broker process; written in its registration and, when it wins, in /controller. */
  readonly incarnationId = randomUUID();
  private sessionAlive = true;
  private closed = false;
  private campaigning = false;
  private campaignTimer: NodeJS.Timeout | null = null;
  /** The controller as last reported by 'controllerChange', to report only changes. */
  private reportedController = '';

  private constructor(
    private readonly client: Etcd3,
    private readonly kv: Namespace,
    readonly cache: MetadataCache,
    private lease: Lease,
    private readonly options: EtcdClusterOptions,
  ) {
    super();
  }

  /**
   * Connects, loads the metadata cache, registers the broker (throws DuplicateBrokerError if its id
   * is taken) and starts standing for controller.
   */
  static async start(options: EtcdClusterOptions): Promise<EtcdCluster> {
    const timeout = options.requestTimeoutMs ?? 5000;
    const client = new Etcd3({
      hosts: options.connect.endpoints.map((e) => `http://${e}`),
      defaultCallOptions: (ctx) => (ctx.isStream ? {} : { deadline: Date.now() + timeout }),
      // The watch feeds the metadata cache: after an etcd outage, retry within 2 s (etcd3's default
      // backs off to 30 s, a long time for a broker to act on stale metadata).
      faultHandling: { watchBackoff: new ExponentialBackoff({ initialDelay: 100, maxDelay: 2000 }).next() },
    });
    const kv = options.connect.prefix === '' ? client : client.namespace(options.connect.prefix);
    let cache: MetadataCache | undefined;
    const lease = kv.lease(leaseTtlSeconds(options.sessionTimeoutMs));
    // Until the cluster object listens, a lost lease must not be an unhandled 'lost' event.
    const lostEarly = (err: Error) => options.logger?.warn({ err }, 'etcd lease lost while starting');
    lease.on('lost', lostEarly);
    try {
      cache = await MetadataCache.start(kv, options.logger);
      const cluster = new EtcdCluster(client, kv, cache, lease, options);
      await cluster.register();
      lease.off('lost', lostEarly);
      lease.on('lost', (err) => cluster.onSessionLost(lease, err));
      cache.on('change', () => cluster.onMetadataChange());
      cluster.onMetadataChange();
      return cluster;
    } catch (e) {
      await lease.revoke().catch(() => undefined);
      await cache?.close();
      client.close();
      throw e;
    }
  }

  get nodeId(): number {
    return this.options.nodeId;
  }

  /** Whether this broker is the controller now (as far as it knows: its writes are fenced anyway). */
  get isController(): boolean {
    const c = this.cache.controller();
    return this.sessionAlive && c !== null && c.brokerId === this.nodeId && c.incarnationId === this.incarnationId;
  }

  /** The controller's broker id, -1 while there is none. */
  get controllerId(): number {
    return this.cache.controller()?.brokerId ?? -1;
  }

  /** The lease holding this broker's registration (and /controller while it is the controller). */
  leaseId(): Promise<string> {
    return this.lease.grant();
  }

  /**
   * Applies `ops` in one etcd transaction if this broker is still the controller with the epoch it
   * won with, and every partition state is at its expected epoch. Resolves with the revision of the
   * write (the cache reflects it already) or false when a partition epoch was stale; throws
   * NotControllerError when fenced.
   */
  async writeAsController(ops: ControllerOp[]): Promise<number | false> {
    const me = this.cache.controller();
    if (!this.isController || !me) throw new NotControllerError(this.nodeId, null);
    const leaseId = await this.lease.grant();
    let txn = this.kv
      .if(CONTROLLER_EPOCH_KEY, 'Value', '==', String(me.epoch))
      .and(CONTROLLER_KEY, 'Lease', '==', leaseId);
    const writes = [];
    for (const op of ops) {
      switch (op.type) {
        case 'putTopic':
          writes.push(this.kv.put(topicKey(op.topic.name)).value(JSON.stringify(op.topic)));
          break;
        case 'deleteTopic':
          writes.push(this.kv.delete().key(topicKey(op.name)), this.kv.delete().prefix(topicPartitionsPrefix(op.topicId)));
          break;
        case 'topicUnchanged':
          txn = txn.and(topicKey(op.name), 'Mod', '==', op.modRevision);
          break;
        case 'putPartitionState': {
          const key = partitionStateKey(op.topicId, op.partition);
          txn = txn.and(key, 'Version', '==', op.expectedPartitionEpoch + 1);
          writes.push(this.kv.put(key).value(encodePartitionState(op.state)));
          break;
        }
      }
    }
    const res = await txn
      .then(...writes)
      .else(this.kv.get(CONTROLLER_EPOCH_KEY), this.kv.get(CONTROLLER_KEY))
      .commit();
    if (!res.succeeded) {
      const [epochKv] = res.responses[0].response_range.kvs;
      const [controllerKv] = res.responses[1].response_range.kvs;
      const stillMine = epochKv?.value.toString() === String(me.epoch) && controllerKv?.lease === leaseId;
      if (!stillMine) throw new NotControllerError(this.nodeId, me.epoch);
      return false;
    }
    const revision = Number(res.header.revision);
    await this.cache.waitForRevision(revision);
    return revision;
  }

  /**
   * A partition leader's ISR change (Kafka's AlterPartition): writes `next` if the partition is
   * still at `expectedPartitionEpoch`, bumping it; else answers with the current state. A state
   * that already is `next` counts as written, as in Kafka's ZooKeeper mode: the client may retry a
   * write whose answer was lost, and the retry must not look stale.
   */
  async alterPartitionState(
    topicId: string,
    partition: number,
    expectedPartitionEpoch: number,
    next: Omit<PartitionState, 'partitionEpoch'>,
  ): Promise<PartitionUpdateResult> {
    const key = partitionStateKey(topicId, partition);
    const res = await this.kv
      .if(key, 'Version', '==', expectedPartitionEpoch + 1)
      .then(this.kv.put(key).value(encodePartitionState(next)))
      .else(this.kv.get(key))
      .commit();
    if (res.succeeded) {
      await this.cache.waitForRevision(Number(res.header.revision));
      return { ok: true, state: { ...next, partitionEpoch: expectedPartitionEpoch + 1 } };
    }
    const [kv] = res.responses[0].response_range.kvs;
    const current = kv ? decodePartitionState(kv.value.toString(), Number(kv.version)) : null;
    if (current && kv.value.toString() === encodePartitionState(next)) return { ok: true, state: current };
    return { ok: false, current };
  }

  /**
   * A topic write from any broker (CreateTopics, CreatePartitions, AlterConfigs), as Kafka's
   * ZooKeeper-mode AdminZkClient wrote /brokers/topics from whichever broker got the request: puts
   * `topic` if its key is still at `expectedModRevision` (0: absent, so a creation loses a race to
   * another). Resolves whether it was written; either way the cache reflects etcd as of the answer,
   * so a caller that lost can look again.
   */
  async putTopic(topic: TopicAssignment, expectedModRevision: number): Promise<boolean> {
    const key = topicKey(topic.name);
    const res = await this.kv.if(key, 'Mod', '==', expectedModRevision)
      .then(this.kv.put(key).value(JSON.stringify(topic)))
      .commit();
    await this.cache.waitForRevision(Number(res.header.revision));
    return res.succeeded;
  }

  /**
   * DeleteTopics from any broker: the topic key and every partition state under its id, in one
   * transaction, if the key is still at `expectedModRevision` (so still that topic, unchanged).
   */
  async deleteTopic(name: string, topicId: string, expectedModRevision: number): Promise<boolean> {
    const key = topicKey(name);
    const res = await this.kv.if(key, 'Mod', '==', expectedModRevision)
      .then(this.kv.delete().key(key), this.kv.delete().prefix(topicPartitionsPrefix(topicId)))
      .commit();
    await this.cache.waitForRevision(Number(res.header.revision));
    return res.succeeded;
  }

  /**
   * IncrementalAlterConfigs / AlterConfigs of a GROUP resource from any broker: puts the group's
   * overrides (deletes the key when there are none) if its key is still at `expectedModRevision`
   * (0: absent). Resolves whether it was written, the cache up to date either way.
   */
  putGroupConfigs(groupId: string, configs: Record<string, string>, expectedModRevision: number): Promise<boolean> {
    return this.putConfigs(groupConfigsKey(groupId), configs, expectedModRevision);
  }

  /**
   * IncrementalAlterConfigs / AlterConfigs of a BROKER resource ("" the cluster-wide default, else a
   * node id) from any broker: puts its dynamic configs (deletes the key when there are none) if the key
   * is still at `expectedModRevision` (0: absent). Resolves whether it was written, the cache up to date.
   */
  putBrokerConfigs(resource: string, configs: Record<string, string>, expectedModRevision: number): Promise<boolean> {
    return this.putConfigs(brokerConfigsKey(resource), configs, expectedModRevision);
  }

  /**
   * AlterClientQuotas from any broker: each entity's new values (none: its key deleted), all or nothing,
   * if every key is still at the mod revision read (0: absent). Resolves whether it was written, the
   * cache up to date.
   */
  async putClientQuotas(changes: ReadonlyMap<string, { values: Readonly<Record<string, number>>; expectedModRevision: number }>): Promise<boolean> {
    const compares = [...changes].map(([entity, c]) => ({ key: clientQuotaKey(entity), rev: c.expectedModRevision }));
    let txn = this.kv.if(compares[0].key, 'Mod', '==', compares[0].rev);
    for (const c of compares.slice(1)) txn = txn.and(c.key, 'Mod', '==', c.rev);
    const writes = [...changes].map(([entity, c]) => (Object.keys(c.values).length > 0
      ? this.kv.put(clientQuotaKey(entity)).value(JSON.stringify(c.values))
      : this.kv.delete().key(clientQuotaKey(entity))));
    const res = await txn.then(...writes).commit();
    await this.cache.waitForRevision(Number(res.header.revision));
    return res.succeeded;
  }

  /**
   * AlterUserScramCredentials from any broker: each user's credentials (none: the key deleted), in one
   * transaction, if every user's key is still at its `expectedModRevision` (0: absent). Resolves
   * whether it was written, the cache up to date either way.
   */
  async putScramCredentials(writes: { user: string; credentials: UserScramCredentials; expectedModRevision: number }[]): Promise<boolean> {
    if (writes.length === 0) return true;
    const [first, ...rest] = writes.map((w) => ({ ...w, key: scramCredentialsKey(w.user) }));
    let txn = this.kv.if(first.key, 'Mod', '==', first.expectedModRevision);
    for (const w of rest) txn = txn.and(w.key, 'Mod', '==', w.expectedModRevision);
    const res = await txn.then(...[first, ...rest].map((w) => (Object.keys(w.credentials).length > 0
      ? this.kv.put(w.key).value(JSON.stringify(storeScramCredentials(w.credentials)))
      : this.kv.delete().key(w.key)))).commit();
    await this.cache.waitForRevision(Number(res.header.revision));
    return res.succeeded;
  }

  /**
   * Puts and deletes ACL keys, unconditionally: an ACL's key is the ACL, so a concurrent create of the
   * same ACL writes the same key, and a delete of one already gone does nothing. Resolves once the
   * cache reflects the writes. Transactions hold at most etcd's default --max-txn-ops (128).
   */
  async changeAcls(add: readonly AclBinding[], remove: readonly AclBinding[]): Promise<void> {
    const ops = [...add.map((b) => this.kv.put(aclKey(b)).value(JSON.stringify(b))), ...remove.map((b) => this.kv.delete().key(aclKey(b)))];
    let revision = 0;
    for (let i = 0; i < ops.length; i += MAX_TXN_OPS) {
      // A transaction needs a comparison: the cluster id's presence, true of every cluster a broker joined.
      const res = await this.kv.if(CLUSTER_ID_KEY, 'Version', '>', 0).then(...ops.slice(i, i + MAX_TXN_OPS)).commit();
      revision = Number(res.header.revision);
    }
    await this.cache.waitForRevision(revision);
  }

  /** A config key's new overrides (none: the key deleted), if it is still at `expectedModRevision`. */
  private async putConfigs(key: string, configs: Record<string, string>, expectedModRevision: number): Promise<boolean> {
    const write = Object.keys(configs).length > 0 ? this.kv.put(key).value(JSON.stringify(configs)) : this.kv.delete().key(key);
    const res = await this.kv.if(key, 'Mod', '==', expectedModRevision).then(write).commit();
    await this.cache.waitForRevision(Number(res.header.revision));
    return res.succeeded;
  }

  /** The cluster's id: `candidate` if this is the first broker to ask, else the one the first set. */
  async clusterId(candidate: string): Promise<string> {
    const res = await this.kv.if(CLUSTER_ID_KEY, 'Create', '==', 0)
      .then(this.kv.put(CLUSTER_ID_KEY).value(candidate))
      .else(this.kv.get(CLUSTER_ID_KEY))
      .commit();
    return res.succeeded ? candidate : res.responses[0].response_range.kvs[0].value.toString();
  }

  /**
   * UpdateFeatures from any broker (and the first broker's defaults): puts the finalized feature
   * levels if their key is still at `expectedModRevision` (0: absent). Resolves whether it was
   * written; either way the cache reflects etcd as of the answer.
   */
  async putFinalizedFeatures(levels: Readonly<Record<string, number>>, expectedModRevision: number): Promise<boolean> {
    const res = await this.kv.if(FEATURES_KEY, 'Mod', '==', expectedModRevision)
      .then(this.kv.put(FEATURES_KEY).value(JSON.stringify(levels)))
      .commit();
    await this.cache.waitForRevision(Number(res.header.revision));
    return res.succeeded;
  }

  /**
   * Reserves the next `blockSize` producer ids for this broker (Kafka's ZooKeeper-era
   * /latest_producer_id_block, KRaft's AllocateProducerIds): moves /producer_ids_end on if no
   * other broker moved it meanwhile, and resolves with the first id of the block.
   */
  async reserveProducerIdBlock(blockSize: number): Promise<number> {
    for (;;) {
      const [current] = (await this.kv.get(PRODUCER_IDS_END_KEY).exec()).kvs;
      const first = current ? Number(current.value.toString()) : 0;
      const res = await this.kv.if(PRODUCER_IDS_END_KEY, 'Mod', '==', current ? current.mod_revision : 0)
        .then(this.kv.put(PRODUCER_IDS_END_KEY).value(String(first + blockSize)))
        .commit();
      if (res.succeeded) return first;
    }
  }

  /** Leaves the cluster: revoking the lease removes the registration (and /controller if ours) at once. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.campaignTimer) clearTimeout(this.campaignTimer);
    await this.lease.revoke().catch((err) => this.options.logger?.warn({ err }, 'cannot revoke the etcd lease'));
    await this.cache.close();
    this.client.close();
  }

  private async register(): Promise<void> {
    const key = brokerKey(this.nodeId);
    const registration: BrokerRegistration = {
      brokerId: this.nodeId,
      incarnationId: this.incarnationId,
      endpoints: this.options.endpoints.map((e) => ({ ...e })),
      rack: this.options.rack ?? null,
      supportedFeatures: this.options.supportedFeatures?.map((f) => ({ ...f })),
    };
    const res = await this.kv
      .if(key, 'Create', '==', 0)
      .then(this.kv.put(key).value(JSON.stringify(registration)).lease(await this.lease.grant()))
      .else(this.kv.get(key))
      .commit();
    let revision = Number(res.header.revision);
    if (!res.succeeded) {
      const [kv] = res.responses[0].response_range.kvs;
      const existing = JSON.parse(kv.value.toString()) as BrokerRegistration;
      if (existing.incarnationId !== this.incarnationId) throw new DuplicateBrokerError(this.nodeId, existing);
      // Our own incarnation: the client retried a registration whose answer was lost, or a new
      // session registers again before the old lease's key expired: the key moves to the new lease.
      const leaseId = await this.lease.grant();
      if (kv.lease !== leaseId) revision = Number((await this.kv.put(key).value(JSON.stringify(registration)).lease(leaseId).exec()).header.revision);
    }
    await this.cache.waitForRevision(revision);
  }

  private onMetadataChange(): void {
    this.reportControllerChange();
    if (this.cache.controller() === null) void this.campaign();
  }

  private onSessionLost(lease: Lease, err: Error): void {
    if (this.closed || lease !== this.lease || !this.sessionAlive) return;
    this.sessionAlive = false;
    this.options.logger?.error({ err, brokerId: this.nodeId }, 'etcd session lost: this broker is no longer registered');
    this.emit('sessionLost', err);
    this.reportControllerChange();
    void this.renewSession();
  }

  /** A new lease and the registration under it, retried until it succeeds or the cluster closes. */
  private async renewSession(): Promise<void> {
    while (!this.closed) {
      const lease = this.kv.lease(leaseTtlSeconds(this.options.sessionTimeoutMs));
      lease.on('lost', (err) => this.onSessionLost(lease, err));
      this.lease = lease;
      try {
        await this.register();
        this.sessionAlive = true;
        this.options.logger?.warn({ brokerId: this.nodeId }, 'etcd session renewed: this broker is registered again');
        this.emit('sessionRenewed');
        this.onMetadataChange();
        return;
      } catch (err) {
        await lease.revoke().catch(() => undefined);
        if (this.closed) return;
        this.options.logger?.warn({ err }, 'cannot register again with etcd; retrying');
        await new Promise((resolve) => setTimeout(resolve, SESSION_RETRY_MS));
      }
    }
  }

  /** Emits 'controllerChange' (controller id, or -1) when the controller or its epoch changed. */
  private reportControllerChange(): void {
    const c = this.cache.controller();
    const now = c ? `${c.brokerId}@${c.epoch}:${this.isController}` : 'none';
    if (now === this.reportedController) return;
    this.reportedController = now;
    this.emit('controllerChange', this.controllerId);
  }

  /**
   * One attempt to become the controller: create /controller under our lease and bump the epoch,
   * if there is still no controller and the epoch is the one we read. Retries while the cluster is
   * left without a controller (an etcd error, or a race lost to a controller that died since).
   */
  private async campaign(): Promise<void> {
    if (this.campaigning || this.closed || !this.sessionAlive) return;
    this.campaigning = true;
    try {
      const leaseId = await this.lease.grant();
      const epochRes = await this.kv.get(CONTROLLER_EPOCH_KEY).exec();
      const [epochKv] = epochRes.kvs;
      const epoch = (epochKv ? Number(epochKv.value.toString()) : 0) + 1;
      const record: ControllerRecord = { brokerId: this.nodeId, epoch, incarnationId: this.incarnationId };
      const res = await this.kv
        .if(CONTROLLER_KEY, 'Create', '==', 0)
        .and(CONTROLLER_EPOCH_KEY, 'Mod', '==', epochKv ? epochKv.mod_revision : 0)
        .then(
          this.kv.put(CONTROLLER_KEY).value(JSON.stringify(record)).lease(leaseId),
          this.kv.put(CONTROLLER_EPOCH_KEY).value(String(epoch)),
        )
        .commit();
      if (res.succeeded) {
        this.options.logger?.info({ brokerId: this.nodeId, epoch }, 'elected controller');
        await this.cache.waitForRevision(Number(res.header.revision));
      }
    } catch (err) {
      if (!this.closed) this.options.logger?.warn({ err }, 'controller campaign failed');
    } finally {
      this.campaigning = false;
    }
    // Changes seen while this attempt ran did not start another: look again.
    if (!this.closed && this.sessionAlive && this.cache.controller() === null && !this.campaignTimer) {
      this.campaignTimer = setTimeout(() => {
        this.campaignTimer = null;
        void this.campaign();
      }, CAMPAIGN_RETRY_MS);
    }
  }
}
