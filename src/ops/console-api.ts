/**
 * The web console's JSON API (GET/POST/DELETE under /api/), over src/admin: what the console's pages
 * read, and, only with http.console.writes.enable=true, the few changes it may make. It reads the
 * cluster as any Kafka client would, so the same API serves a broker's own cluster and, under
 * `fjord console`, any other (Fjord or Apache Kafka).
 *
 * Errors: `{ error: "NAME: message" }` with 400 for bad input, 403 for a write on a read-only
 * console (or what the cluster's ACLs refuse), 404 for an unknown topic, group, broker or route,
 * 409 for a conflict (topic exists, group not empty), 502 when the cluster failed or did not answer.
 */
import { KafkaConnection, type ConnectionOptions } from '../admin/connection';
import { describeCluster } from '../admin/cluster';
import { describeConfigs } from '../admin/configs';
import { createTopic, deleteTopics, describeTopics, listTopics } from '../admin/topics';
import { describeGroups, listGroups, planOffsetReset, applyOffsetReset, type ResetTarget } from '../admin/groups';
import { browseMessages } from '../admin/messages';
import type { TaskProgress } from '../metrics/progress';
import { packageVersion } from '../common/package-version';
import { HttpError } from './http-error';

export const READ_ONLY_MESSAGE = 'the console is read-only: set http.console.writes.enable=true';

/** Messages one browse returns when the page does not say. */
const DEFAULT_BROWSE_LIMIT = 50;
const MAX_BROWSE_LIMIT = 1000;

export interface ConsoleRequest {
  method: string;
  /** The path's segments after /api/, decoded. */
  segments: string[];
  query: URLSearchParams;
  /** The request's JSON body (400 when it is not JSON). */
  body(): Promise<unknown>;
}

export interface ConsoleApiOptions {
  /** Where the cluster is; throws an HttpError when the console cannot reach it (e.g. no PLAINTEXT listener). */
  cluster: () => ConnectionOptions;
  /** The broker serving the console; null under `fjord console`. */
  nodeId: number | null;
  writesEnabled: boolean;
  /** Whether /metrics is served (a broker's console). */
  metrics: boolean;
  /** The broker's long work in progress; none under `fjord console`. */
  progress?: () => TaskProgress[];
}

export class ConsoleApi {
  private connection?: KafkaConnection;

  constructor(private readonly options: ConsoleApiOptions) {}

  /** The cluster's connection, made on first use (and after close, never again: cluster() refuses). */
  private cluster(): KafkaConnection {
    const options = this.options.cluster();
    this.connection ??= new KafkaConnection(options);
    return this.connection;
  }

  async close(): Promise<void> {
    await this.connection?.close();
  }

  /** Answers one request: the status and the value to send as JSON. */
  async handle(req: ConsoleRequest): Promise<{ status: number; value: unknown }> {
    const [resource, name, sub, ...rest] = req.segments;
    const route = `${req.method} ${[resource, name === undefined ? '' : ':id', sub ?? ''].filter(Boolean).join('/')}`;
    if (rest.length === 0) {
      switch (route) {
        case 'GET info':
          return ok(this.info());
        case 'GET cluster':
          return ok(await describeCluster(this.cluster()));
        case 'GET progress':
          return ok(this.options.progress?.() ?? []);
        case 'GET topics':
          return ok(await listTopics(this.cluster(), { includeInternal: true }));
        case 'GET topics/:id':
          return ok(await this.topic(name));
        case 'GET topics/:id/messages':
          return ok(await this.messages(name, req.query));
        case 'GET groups':
          return ok(await this.groups());
        case 'GET groups/:id':
          return ok(await this.group(name));
        case 'GET brokers/:id/configs':
          return ok(await this.brokerConfigs(name));
        case 'POST topics':
          this.checkWritable();
          return { status: 201, value: await this.createTopic(await req.body()) };
        case 'DELETE topics/:id':
          this.checkWritable();
          await deleteTopics(this.cluster(), [name]);
          return ok({ deleted: name });
        case 'POST groups/:id/reset-offsets':
          this.checkWritable();
          return ok(await this.resetOffsets(name, await req.body()));
      }
    }
    throw new HttpError(404, `no such route: ${req.method} /api/${req.segments.join('/')}`);
  }

  private info() {
    return { version: packageVersion(), nodeId: this.options.nodeId, writesEnabled: this.options.writesEnabled, metrics: this.options.metrics };
  }

  private checkWritable(): void {
    if (!this.options.writesEnabled) throw new HttpError(403, READ_ONLY_MESSAGE);
  }

  private async topic(name: string) {
    const connection = this.cluster();
    // An unknown topic is UNKNOWN_TOPIC_OR_PARTITION from either (404).
    const [descriptions, configs] = await Promise.all([
      describeTopics(connection, [name]),
      describeConfigs(connection, { type: 'topic', name }, { all: true }),
    ]);
    return { ...descriptions[0], configs };
  }

  private async messages(topic: string, query: URLSearchParams) {
    const partition = integerParam(query, 'partition', 0, 2 ** 31 - 1);
    if (partition === undefined) throw new HttpError(400, 'partition is required: ?partition=P');
    if (query.has('offset') && query.has('timestamp')) throw new HttpError(400, 'give offset or timestamp, not both');
    const offset = query.get('offset');
    if (offset !== null && !/^\d{1,19}$/.test(offset)) throw new HttpError(400, `offset must be a non-negative integer, not '${offset}'`);
    return browseMessages(this.cluster(), {
      topic,
      partition,
      fromOffset: offset === null ? undefined : BigInt(offset),
      fromTimestampMs: integerParam(query, 'timestamp', 0, Number.MAX_SAFE_INTEGER),
      limit: integerParam(query, 'limit', 1, MAX_BROWSE_LIMIT) ?? DEFAULT_BROWSE_LIMIT,
    });
  }

  /** Every group with its total lag (null where the group could not be described, e.g. a type the cluster describes otherwise). */
  private async groups() {
    const connection = this.cluster();
    const groups = await listGroups(connection);
    const described = await Promise.allSettled(groups.map((g) => describeGroups(connection, [g.groupId])));
    return groups.map((g, i) => {
      const d = described[i];
      return { ...g, totalLag: d.status === 'fulfilled' && d.value.length > 0 ? d.value[0].totalLag : null };
    });
  }

  private async group(groupId: string) {
    const [description] = await describeGroups(this.cluster(), [groupId]);
    // DescribeGroups answers an unknown group as Dead rather than with an error.
    if (!description || description.state === 'Dead') throw new HttpError(404, `GROUP_ID_NOT_FOUND: no group ${groupId}`);
    return description;
  }

  private async brokerConfigs(id: string) {
    if (!/^\d{1,10}$/.test(id)) throw new HttpError(400, `a broker id is a non-negative integer, not '${id}'`);
    const connection = this.cluster();
    const cluster = await describeCluster(connection);
    if (!cluster.brokers.some((b) => b.nodeId === Number(id))) throw new HttpError(404, `no broker ${id} in the cluster`);
    return describeConfigs(connection, { type: 'broker', name: id }, { all: true });
  }

  private async createTopic(body: unknown) {
    const b = objectBody(body);
    if (typeof b.name !== 'string' || b.name === '') throw new HttpError(400, 'name must be a non-empty string');
    const partitions = optionalInteger(b, 'partitions');
    const replicationFactor = optionalInteger(b, 'replicationFactor');
    const configs = b.configs ?? {};
    if (typeof configs !== 'object' || configs === null || Array.isArray(configs) || Object.values(configs).some((v) => typeof v !== 'string')) {
      throw new HttpError(400, 'configs must be an object of strings');
    }
    await createTopic(this.cluster(), { name: b.name, partitions, replicationFactor, configs: configs as Record<string, string> });
    return { created: b.name };
  }

  private async resetOffsets(groupId: string, body: unknown) {
    const b = objectBody(body);
    if (!Array.isArray(b.topics) || b.topics.length === 0 || b.topics.some((t) => typeof t !== 'string' || t === '')) {
      throw new HttpError(400, 'topics must be a non-empty array of "topic" or "topic:0,1"');
    }
    if (b.dryRun !== undefined && typeof b.dryRun !== 'boolean') throw new HttpError(400, 'dryRun must be a boolean');
    const connection = this.cluster();
    const plan = await planOffsetReset(connection, { groupId, topics: b.topics as string[], target: resetTarget(b.target) });
    if (b.dryRun !== true) await applyOffsetReset(connection, groupId, plan);
    return plan;
  }
}

function ok(value: unknown) {
  return { status: 200, value };
}

function objectBody(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new HttpError(400, 'the body must be a JSON object');
  return body as Record<string, unknown>;
}

function optionalInteger(b: Record<string, unknown>, key: string): number | undefined {
  const v = b[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v)) throw new HttpError(400, `${key} must be an integer`);
  return v;
}

function integerParam(query: URLSearchParams, key: string, min: number, max: number): number | undefined {
  const raw = query.get(key);
  if (raw === null) return undefined;
  const v = Number(raw);
  if (!/^\d+$/.test(raw) || v < min || v > max) throw new HttpError(400, `${key} must be an integer in [${min}, ${max}], not '${raw}'`);
  return v;
}

/** A bigint from JSON: a number (when exact) or a string of digits (offsets past 2^53). */
function bigintField(v: unknown, key: string): bigint {
  if (typeof v === 'number' && Number.isSafeInteger(v)) return BigInt(v);
  if (typeof v === 'string' && /^-?\d{1,19}$/.test(v)) return BigInt(v);
  throw new HttpError(400, `target.${key} must be an integer`);
}

function resetTarget(v: unknown): ResetTarget {
  if (typeof v !== 'object' || v === null) throw new HttpError(400, 'target must be an object such as { "to": "earliest" }');
  const t = v as Record<string, unknown>;
  switch (t.to) {
    case 'earliest':
    case 'latest':
      return { to: t.to };
    case 'offset':
      return { to: 'offset', offset: bigintField(t.offset, 'offset') };
    case 'shift':
      return { to: 'shift', by: bigintField(t.by, 'by') };
    case 'timestamp':
      if (typeof t.timestampMs !== 'number' || !Number.isSafeInteger(t.timestampMs)) throw new HttpError(400, 'target.timestampMs must be an integer');
      return { to: 'timestamp', timestampMs: t.timestampMs };
    default:
      throw new HttpError(400, 'target.to must be earliest, latest, offset, timestamp or shift');
  }
}
