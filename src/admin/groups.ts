/**
 * Consumer groups of any Kafka-compatible cluster: list, describe (members, assignments, committed
 * offsets and lag), delete, and offset resets planned then applied, as kafka-consumer-groups does.
 *
 * Classic groups are described with DescribeGroups; KIP-848 consumer groups with
 * ConsumerGroupDescribe, whose answer is parsed here because @platformatic/kafka 1.35's parser of it
 * misreads the members (it reads subscribedTopicNames as one string and skips no tagged fields of
 * the assignments).
 */
import { createAPI, FindCoordinatorKeyTypes, type Admin, type Reader, Writer } from '@platformatic/kafka';
import { errorName } from '../common/errors';
import type { KafkaConnection } from './connection';
import { AdminError } from './errors';
import { topicsMetadata } from './messages';

export interface GroupSummary {
  groupId: string;
  /** classic, consumer, share, streams */
  type: string;
  /** Kafka's names: Stable, Empty, PreparingRebalance, ... */
  state: string;
  protocolType: string;
}

export interface GroupOffset {
  topic: string;
  partition: number;
  /** null: the group has no committed offset for the partition. */
  committedOffset: bigint | null;
  latestOffset: bigint;
  lag: bigint | null;
  /** The member the partition is assigned to, if any. */
  memberId: string | null;
}

export interface GroupMemberDescription {
  memberId: string;
  groupInstanceId: string | null;
  clientId: string;
  host: string;
  assignment: { topic: string; partitions: number[] }[];
}

export interface GroupDescription {
  groupId: string;
  type: string;
  state: string;
  protocol: string;
  coordinator: number;
  members: GroupMemberDescription[];
  offsets: GroupOffset[];
  totalLag: bigint;
}

export interface OffsetReset {
  topic: string;
  partition: number;
  currentOffset: bigint | null;
  newOffset: bigint;
}

export type ResetTarget =
  | { to: 'earliest' }
  | { to: 'latest' }
  | { to: 'offset'; offset: bigint }
  | { to: 'timestamp'; timestampMs: number }
  | { to: 'shift'; by: bigint };

// ListOffsets' special timestamps.
const LATEST_TIMESTAMP = -1n;
const EARLIEST_TIMESTAMP = -2n;

/** Kafka's state names, by the upper-cased form @platformatic/kafka gives them in. */
const STATE_NAMES = new Map(
  ['Stable', 'Empty', 'PreparingRebalance', 'CompletingRebalance', 'Dead', 'Assigning', 'Reconciling', 'NotReady', 'Unknown']
    .map((name) => [name.toUpperCase(), name]),
);

function stateName(state: string): string {
  return STATE_NAMES.get(state.toUpperCase().replace(/_/g, '')) ?? state;
}

export async function listGroups(c: KafkaConnection): Promise<GroupSummary[]> {
  const groups = await c.admin().listGroups();
  return [...groups.values()]
    .map((g) => ({ groupId: g.id, type: g.groupType || 'classic', state: stateName(g.state), protocolType: g.protocolType }))
    .sort((a, b) => a.groupId.localeCompare(b.groupId));
}

export async function describeGroups(c: KafkaConnection, ids: string[]): Promise<GroupDescription[]> {
  const admin = c.admin();
  const types = new Map((await listGroups(c)).map((g) => [g.groupId, g.type]));
  const coordinators = new Map((await admin.findCoordinator({ keyType: FindCoordinatorKeyTypes.GROUP, keys: ids })).map((r) => [r.key, r]));
  const classicIds = ids.filter((id) => types.get(id) !== 'consumer');
  const classic = classicIds.length ? await admin.describeGroups({ groups: classicIds }) : new Map();
  const described: GroupDescription[] = [];
  for (const groupId of ids) {
    const coordinator = coordinators.get(groupId);
    if (!coordinator) throw new AdminError(`No coordinator found for group ${groupId}.`, 'COORDINATOR_NOT_AVAILABLE');
    let base: Omit<GroupDescription, 'offsets' | 'totalLag'>;
    if (types.get(groupId) === 'consumer') {
      base = await describeConsumerGroup(admin, coordinator, groupId);
    } else {
      const g = classic.get(groupId);
      if (!g || stateName(g.state) === 'Dead') throw new AdminError(`Group ${groupId} not found.`, 'GROUP_ID_NOT_FOUND');
      base = {
        groupId,
        type: types.get(groupId) ?? 'classic',
        state: stateName(g.state),
        protocol: g.protocol,
        coordinator: coordinator.nodeId,
        members: [...g.members.values()].map((m) => ({
          memberId: m.id,
          groupInstanceId: m.groupInstanceId,
          clientId: m.clientId,
          host: m.clientHost,
          assignment: [...(m.assignments?.values() ?? [])].map((a) => ({ topic: a.topic, partitions: [...a.partitions].sort((x, y) => x - y) })),
        })),
      };
    }
    const offsets = await groupOffsets(c, groupId, base.members);
    described.push({ ...base, offsets, totalLag: offsets.reduce((sum, o) => sum + (o.lag ?? 0n), 0n) });
  }
  return described;
}

export async function deleteGroups(c: KafkaConnection, ids: string[]): Promise<void> {
  await c.admin().deleteGroups({ groups: ids });
}

/** Committed offsets of a group, keyed `topic:partition` (only partitions with one). */
async function committedOffsets(c: KafkaConnection, groupId: string): Promise<Map<string, bigint>> {
  const [group] = await c.admin().listConsumerGroupOffsets({ groups: [groupId] });
  const committed = new Map<string, bigint>();
  for (const t of group?.topics ?? []) {
    for (const p of t.partitions) if (p.committedOffset >= 0n) committed.set(`${t.name}:${p.partitionIndex}`, p.committedOffset);
  }
  return committed;
}

/** ListOffsets at one timestamp (or LATEST/EARLIEST) for partitions keyed `topic:partition`. */
async function offsetsAt(c: KafkaConnection, partitions: { topic: string; partition: number }[], timestamp: bigint): Promise<Map<string, bigint>> {
  const byTopic = new Map<string, number[]>();
  for (const { topic, partition } of partitions) byTopic.set(topic, [...(byTopic.get(topic) ?? []), partition]);
  const found = new Map<string, bigint>();
  if (!byTopic.size) return found;
  const listed = await c.admin().listOffsets({
    topics: [...byTopic].map(([name, ps]) => ({ name, partitions: ps.map((partitionIndex) => ({ partitionIndex, timestamp })) })),
  });
  for (const t of listed) for (const p of t.partitions) found.set(`${t.name}:${p.partitionIndex}`, p.offset);
  return found;
}

async function groupOffsets(c: KafkaConnection, groupId: string, members: GroupMemberDescription[]): Promise<GroupOffset[]> {
  const committed = await committedOffsets(c, groupId);
  const owner = new Map<string, string>();
  for (const m of members) for (const a of m.assignment) for (const p of a.partitions) owner.set(`${a.topic}:${p}`, m.memberId);
  const keys = [...new Set([...committed.keys(), ...owner.keys()])];
  const partitions = keys.map(splitKey).sort((a, b) => a.topic.localeCompare(b.topic) || a.partition - b.partition);
  const latest = await offsetsAt(c, partitions, LATEST_TIMESTAMP);
  return partitions.map(({ topic, partition }) => {
    const key = `${topic}:${partition}`;
    const committedOffset = committed.get(key) ?? null;
    const latestOffset = latest.get(key) ?? 0n;
    const lag = committedOffset === null ? null : latestOffset > committedOffset ? latestOffset - committedOffset : 0n;
    return { topic, partition, committedOffset, latestOffset, lag, memberId: owner.get(key) ?? null };
  });
}

function splitKey(key: string): { topic: string; partition: number } {
  const at = key.lastIndexOf(':');
  return { topic: key.slice(0, at), partition: Number(key.slice(at + 1)) };
}

/**
 * The offsets a reset would commit, as kafka-consumer-groups --reset-offsets computes them: new
 * offsets are kept within [earliest, latest] of each partition. `topics` are "topic" (all its
 * partitions) or "topic:0,1"; none means every topic the group has committed offsets for.
 */
export async function planOffsetReset(c: KafkaConnection, opts: { groupId: string; topics: string[]; target: ResetTarget }): Promise<OffsetReset[]> {
  const { groupId, target } = opts;
  const [group] = await listGroupsById(c, [groupId]);
  if (group && !['Empty', 'Dead'].includes(group.state)) {
    throw new AdminError(`Assignments can only be reset if the group '${groupId}' is inactive, but the current state is ${group.state}.`, 'NON_EMPTY_GROUP');
  }
  const committed = await committedOffsets(c, groupId);
  const partitions = opts.topics.length ? await partitionsOf(c, opts.topics) : [...committed.keys()].map(splitKey);
  partitions.sort((a, b) => a.topic.localeCompare(b.topic) || a.partition - b.partition);
  const earliest = await offsetsAt(c, partitions, EARLIEST_TIMESTAMP);
  const latest = await offsetsAt(c, partitions, LATEST_TIMESTAMP);
  const atTimestamp = target.to === 'timestamp' ? await offsetsAt(c, partitions, BigInt(target.timestampMs)) : undefined;
  return partitions.map(({ topic, partition }) => {
    const key = `${topic}:${partition}`;
    const currentOffset = committed.get(key) ?? null;
    const low = earliest.get(key) ?? 0n;
    const high = latest.get(key) ?? 0n;
    let wanted: bigint;
    switch (target.to) {
      case 'earliest': wanted = low; break;
      case 'latest': wanted = high; break;
      case 'offset': wanted = target.offset; break;
      case 'timestamp': {
        // No record at or after the timestamp: the log end, as Kafka's tool does.
        const found = atTimestamp?.get(key) ?? -1n;
        wanted = found < 0n ? high : found;
        break;
      }
      case 'shift':
        if (currentOffset === null) throw new AdminError(`Cannot shift offset for partition ${key} since there is no current committed offset.`);
        wanted = currentOffset + target.by;
        break;
    }
    const newOffset = wanted < low ? low : wanted > high ? high : wanted;
    return { topic, partition, currentOffset, newOffset };
  });
}

/** Commits a plan of planOffsetReset, a batch of partitions at a time (`onProgress` gets how many are done). */
export async function applyOffsetReset(c: KafkaConnection, groupId: string, plan: OffsetReset[], onProgress?: (done: number) => void): Promise<void> {
  const BATCH = 200;
  for (let i = 0; i < plan.length; i += BATCH) {
    const byTopic = new Map<string, { partition: number; offset: bigint }[]>();
    for (const r of plan.slice(i, i + BATCH)) byTopic.set(r.topic, [...(byTopic.get(r.topic) ?? []), { partition: r.partition, offset: r.newOffset }]);
    await c.admin().alterConsumerGroupOffsets({ groupId, topics: [...byTopic].map(([name, partitionOffsets]) => ({ name, partitionOffsets })) });
    onProgress?.(Math.min(i + BATCH, plan.length));
  }
}

async function listGroupsById(c: KafkaConnection, ids: string[]): Promise<GroupSummary[]> {
  const all = await listGroups(c);
  return all.filter((g) => ids.includes(g.groupId));
}

/** The partitions named by "topic" (all of them) or "topic:0,1", checked against the cluster's metadata. */
async function partitionsOf(c: KafkaConnection, specs: string[]): Promise<{ topic: string; partition: number }[]> {
  const parsed = specs.map((spec) => {
    const at = spec.indexOf(':');
    if (at < 0) return { topic: spec, partitions: undefined };
    const partitions = spec.slice(at + 1).split(',').map((p) => Number(p.trim()));
    if (partitions.some((p) => !Number.isInteger(p) || p < 0)) throw new AdminError(`Bad partition list in '${spec}': expected TOPIC:P[,P...]`);
    return { topic: spec.slice(0, at), partitions };
  });
  const metadata = await topicsMetadata(c, [...new Set(parsed.map((p) => p.topic))]);
  const result: { topic: string; partition: number }[] = [];
  for (const { topic, partitions } of parsed) {
    const count = metadata.get(topic)?.partitionsCount ?? 0;
    for (const partition of partitions ?? [...Array(count).keys()]) {
      if (partition >= count) throw new AdminError(`Topic ${topic} has no partition ${partition}.`, 'UNKNOWN_TOPIC_OR_PARTITION');
      result.push({ topic, partition });
    }
  }
  return result;
}

// ConsumerGroupDescribe v0 (KIP-848), with a parser that reads the members as the schema has them.
interface DescribedConsumerGroup {
  errorCode: number;
  errorMessage: string | null;
  groupId: string;
  groupState: string;
  assignorName: string;
  members: { memberId: string; instanceId: string | null; clientId: string; clientHost: string; assignment: { topic: string; partitions: number[] }[] }[];
}

function readAssignment(r: Reader): { topic: string; partitions: number[] }[] {
  const topics = r.readArray((t) => {
    t.readUUID();
    const topic = t.readString();
    return { topic, partitions: t.readArray((p) => p.readInt32(), true, false).sort((a, b) => a - b) };
  });
  r.readTaggedFields();
  return topics;
}

const consumerGroupDescribe = createAPI<[groupIds: string[]], DescribedConsumerGroup[]>(
  69,
  0,
  (groupIds: string[]) => Writer.create().appendArray(groupIds, (w, id) => w.appendString(id), true, false).appendBoolean(false).appendTaggedFields(),
  (_correlationId, _apiKey, _apiVersion, reader) => {
    reader.readInt32(); // throttle time
    return reader.readArray((g) => {
      const group: DescribedConsumerGroup = {
        errorCode: g.readInt16(),
        errorMessage: g.readNullableString(),
        groupId: g.readString(),
        groupState: g.readString(),
        assignorName: (g.readInt32(), g.readInt32(), g.readString()), // after the group and assignment epochs
        members: g.readArray((m) => {
          const memberId = m.readString();
          const instanceId = m.readNullableString();
          m.readNullableString(); // rack
          m.readInt32(); // member epoch
          const clientId = m.readString();
          const clientHost = m.readString();
          m.readArray((s) => s.readString(), true, false); // subscribed topic names
          m.readNullableString(); // subscribed regex
          const assignment = readAssignment(m);
          readAssignment(m); // target assignment
          return { memberId, instanceId, clientId, clientHost, assignment };
        }),
      };
      g.readInt32(); // authorized operations
      return group;
    });
  },
);

async function describeConsumerGroup(admin: Admin, coordinator: { nodeId: number; host: string; port: number }, groupId: string): Promise<Omit<GroupDescription, 'offsets' | 'totalLag'>> {
  const connection = await admin.connections.get({ host: coordinator.host, port: coordinator.port });
  const [g] = await consumerGroupDescribe.async(connection, [groupId]);
  if (!g) throw new AdminError(`Group ${groupId} not found.`, 'GROUP_ID_NOT_FOUND');
  if (g.errorCode) throw new AdminError(g.errorMessage ?? `Describing group ${groupId} failed.`, errorName(g.errorCode));
  return {
    groupId,
    type: 'consumer',
    state: stateName(g.groupState),
    protocol: g.assignorName,
    coordinator: coordinator.nodeId,
    members: g.members.map((m) => ({ memberId: m.memberId, groupInstanceId: m.instanceId, clientId: m.clientId, host: m.clientHost, assignment: m.assignment })),
  };
}
