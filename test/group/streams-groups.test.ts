// Streams groups (KIP-1071: src/group/streams-coordinator.ts) on a fake clock, with fake topics:
// joins with a topology, the internal topics created and reported as Kafka reports them, missing
// source topics, leaves, fencing, the reconciliation (an active task is given only once its
// previous owner revoked it), session timeouts, static members, the ids shared with the other
// kinds of groups, commits with member epochs; and the sticky task assignor's balance and stickiness.
import { expect } from 'chai';
import { ErrorCode } from '../../src/common/errors';
import type { StreamsHeartbeatRequest, StreamsHeartbeatResult } from '../../src/group/streams-coordinator';
import { assignTasks } from '../../src/group/streams-assignor';
import { NO_TASKS, taskSetFromWire, type TasksTuple } from '../../src/group/streams-member';
import { StreamsStatus, type StreamsTopology } from '../../src/group/streams-topology';
import { Harness, flush } from './fakes';

const SG = 'app';

/** Word count: subtopology 0 reads `words`, writes the repartition topic; subtopology 1 reads it and counts into a store. */
const TOPOLOGY: StreamsTopology = {
  epoch: 1,
  subtopologies: [
    {
      subtopologyId: '0', sourceTopics: ['words'], repartitionSinkTopics: ['app-counts-repartition'], stateChangelogTopics: [],
      repartitionSourceTopics: [], copartitionGroups: [],
    },
    {
      subtopologyId: '1', sourceTopics: [], repartitionSinkTopics: [],
      stateChangelogTopics: [{ name: 'app-counts-changelog', partitions: 0, replicationFactor: 0, topicConfigs: [{ key: 'cleanup.policy', value: 'compact' }] }],
      repartitionSourceTopics: [{ name: 'app-counts-repartition', partitions: 0, replicationFactor: 0, topicConfigs: [{ key: 'cleanup.policy', value: 'delete' }] }],
      copartitionGroups: [],
    },
  ],
};

function request(opts: Partial<StreamsHeartbeatRequest>): StreamsHeartbeatRequest {
  return {
    groupId: SG, memberId: 'm', memberEpoch: 0, endpointInformationEpoch: 0, instanceId: null, rackId: null, rebalanceTimeoutMs: -1,
    topology: null, sourceTopicRegexes: [], activeTasks: null, standbyTasks: null, warmupTasks: null, processId: null,
    userEndpoint: null, clientTags: null, shutdownApplication: false, clientId: 'client', clientHost: '/127.0.0.1', ...opts,
  };
}

type Wire = { subtopologyId: string; partitions: number[] }[];

/** A Kafka Streams thread as the client behaves: it owns what its last answer said (revoking at once) and reports it. */
class Member {
  epoch = 0;
  active: Wire = [];
  standby: Wire = [];
  last: StreamsHeartbeatResult | undefined;

  constructor(readonly h: Harness, readonly memberId: string, readonly processId = `process-${memberId}`,
    readonly extra: Partial<StreamsHeartbeatRequest> = {}) {}

  join(extra: Partial<StreamsHeartbeatRequest> = {}): StreamsHeartbeatResult {
    this.active = [];
    this.standby = [];
    return this.send({
      memberEpoch: 0, rebalanceTimeoutMs: 30_000, topology: TOPOLOGY, processId: this.processId, activeTasks: [], standbyTasks: [],
      warmupTasks: [], userEndpoint: { host: `${this.memberId}.local`, port: 8080 }, clientTags: [], ...extra,
    });
  }

  heartbeat(extra: Partial<StreamsHeartbeatRequest> = {}): StreamsHeartbeatResult {
    return this.send({ memberEpoch: this.epoch, activeTasks: this.active, standbyTasks: this.standby, warmupTasks: [], ...extra });
  }

  leave(epoch = -1): StreamsHeartbeatResult {
    return this.send({ memberEpoch: epoch });
  }

  private send(opts: Partial<StreamsHeartbeatRequest>): StreamsHeartbeatResult {
    const r = this.h.coordinator.streamsGroupHeartbeat(request({ memberId: this.memberId, ...this.extra, ...opts }));
    this.last = r;
    if (r.errorCode === ErrorCode.NONE && r.memberEpoch >= 0) {
      this.epoch = r.memberEpoch;
      if (r.activeTasks) this.active = r.activeTasks;
      if (r.standbyTasks) this.standby = r.standbyTasks;
    }
    return r;
  }

  tasks(): string[] {
    return this.active.flatMap((t) => t.partitions.map((p) => `${t.subtopologyId}_${p}`)).sort();
  }
}

/** Heartbeats every member in turn for a few rounds; fails if an active task is ever owned twice. */
function settle(members: Member[], rounds = 6): void {
  for (let i = 0; i < rounds; i++) {
    for (const m of members) {
      m.heartbeat();
      const seen = new Set<string>();
      for (const other of members) {
        for (const t of other.tasks()) {
          expect(seen.has(t), `${t} owned twice`).to.equal(false);
          seen.add(t);
        }
      }
    }
  }
}

const ALL_TASKS = ['0_0', '0_1', '0_2', '0_3', '1_0', '1_1', '1_2', '1_3'];

async function readyGroup(): Promise<{ h: Harness; a: Member }> {
  const h = await Harness.start();
  h.topics.set('words', 4);
  const a = new Member(h, 'a');
  a.join();
  a.heartbeat();
  return { h, a };
}

describe('streams groups: heartbeats and reconciliation', () => {
  it('a first member joins; the missing internal topics are created with the topology\'s partitions and configs, then it gets every task', async () => {
    const h = await Harness.start();
    h.topics.set('words', 4);
    const a = new Member(h, 'a');
    const first = a.join();
    expect(first).to.include({ errorCode: 0, memberId: 'a', memberEpoch: 1, heartbeatIntervalMs: 5000, acceptableRecoveryLag: 10_000, taskOffsetIntervalMs: 60_000 });
    expect(first.status).to.deep.equal([{ statusCode: StreamsStatus.MissingInternalTopics, statusDetail: 'Internal topics are missing: app-counts-changelog, app-counts-repartition' }]);
    expect(first.activeTasks).to.deep.equal([]);
    expect(h.internalTopicsCreated.map((t) => [t.name, t.numPartitions, t.replicationFactor, t.configs])).to.deep.equal([
      ['app-counts-repartition', 4, -1, { 'cleanup.policy': 'delete' }],
      ['app-counts-changelog', 4, -1, { 'cleanup.policy': 'compact' }],
    ]);
    expect(h.coordinator.streamsGroupDescribe(SG).groupState).to.equal('NotReady');

    const second = a.heartbeat();
    expect(second.status).to.deep.equal([]);
    expect(second.memberEpoch).to.equal(2);
    expect(a.tasks()).to.deep.equal(ALL_TASKS);
    expect(second.partitionsByUserEndpoint).to.deep.equal([{
      userEndpoint: { host: 'a.local', port: 8080 },
      activePartitions: [{ topic: 'app-counts-repartition', partitions: [0, 1, 2, 3] }, { topic: 'words', partitions: [0, 1, 2, 3] }],
      standbyPartitions: [],
    }]);
    // Nothing new: no tasks, no endpoints (the member has the latest).
    const third = a.heartbeat({ endpointInformationEpoch: second.endpointInformationEpoch });
    expect(third).to.include({ memberEpoch: 2, activeTasks: null, partitionsByUserEndpoint: null });
    expect(h.coordinator.streamsGroupDescribe(SG).groupState).to.equal('Stable');
  });

  it('missing source topics are a status, and members get no tasks until the topic exists', async () => {
    const h = await Harness.start();
    const a = new Member(h, 'a');
    const r = a.join();
    expect(r.status).to.deep.equal([{ statusCode: StreamsStatus.MissingSourceTopics, statusDetail: 'Source topics words are missing.' }]);
    expect(h.internalTopicsCreated).to.deep.equal([]);
    expect(h.coordinator.streamsGroupDescribe(SG).groupState).to.equal('NotReady');
    h.topics.set('words', 2);
    a.heartbeat(); // sees the topic: internal topics created
    a.heartbeat();
    expect(a.tasks()).to.deep.equal(['0_0', '0_1', '1_0', '1_1']);
    expect(h.topics.topic('app-counts-changelog')!.partitions).to.have.length(2);
  });

  it('a new group waits group.streams.initial.rebalance.delay.ms before its first assignment, with Kafka\'s status meanwhile', async () => {
    const h = await Harness.start({ streamsInitialRebalanceDelayMs: 3000 });
    h.topics.set('words', 4);
    const a = new Member(h, 'a');
    const joined = a.join();
    expect(joined.memberEpoch).to.equal(1);
    expect(joined.status[0]).to.deep.equal({ statusCode: StreamsStatus.AssignmentDelayed, statusDetail: 'Assignment delayed due to the configured initial rebalance delay.' });
    await h.advance(2000);
    expect(a.heartbeat().status.map((s) => s.statusCode)).to.deep.equal([StreamsStatus.AssignmentDelayed]);
    expect(a.tasks()).to.deep.equal([]);
    await h.advance(1000);
    const assigned = a.heartbeat();
    expect(assigned.status).to.deep.equal([]);
    expect(assigned.memberEpoch).to.equal(3);
    expect(a.tasks()).to.deep.equal(ALL_TASKS);
  });

  it('a second process joins: tasks are shared evenly, each given only once its previous owner revoked it', async () => {
    const { h, a } = await readyGroup();
    const b = new Member(h, 'b');
    const joined = b.join();
    expect(joined.memberEpoch).to.equal(3);
    // b's target tasks are still a's: b gets nothing yet.
    expect(b.tasks()).to.deep.equal([]);
    const revoking = a.heartbeat();
    // a keeps its epoch while it revokes.
    expect(revoking.memberEpoch).to.equal(2);
    expect(a.tasks()).to.have.length(4);
    settle([a, b]);
    expect(a.tasks()).to.have.length(4);
    expect(b.tasks()).to.have.length(4);
    expect([...a.tasks(), ...b.tasks()].sort()).to.deep.equal(ALL_TASKS);
    expect([a.epoch, b.epoch]).to.deep.equal([3, 3]);
    const d = h.coordinator.streamsGroupDescribe(SG);
    expect(d).to.include({ groupState: 'Stable', groupEpoch: 3, assignmentEpoch: 3 });
    expect(d.members.map((m) => m.processId).sort()).to.deep.equal(['process-a', 'process-b']);
  });

  it('a member that leaves hands its tasks to the others; the last one leaving empties the group', async () => {
    const { h, a } = await readyGroup();
    const b = new Member(h, 'b');
    b.join();
    settle([a, b]);
    expect(b.leave()).to.deep.include({ errorCode: 0, memberEpoch: -1, status: [], heartbeatIntervalMs: 0, acceptableRecoveryLag: -1 });
    settle([a]);
    expect(a.tasks()).to.deep.equal(ALL_TASKS);
    a.leave();
    expect(h.coordinator.streamsGroupDescribe(SG).groupState).to.equal('Empty');
  });

  it('a member whose session times out is fenced and its tasks move', async () => {
    const { h, a } = await readyGroup();
    const b = new Member(h, 'b');
    b.join();
    settle([a, b]);
    for (let i = 0; i < 10; i++) {
      await h.advance(5000);
      a.heartbeat();
    }
    expect(h.coordinator.streamsGroupDescribe(SG).members.map((m) => m.memberId)).to.deep.equal(['a']);
    settle([a]);
    expect(a.tasks()).to.deep.equal(ALL_TASKS);
    expect(b.heartbeat()).to.include({ errorCode: ErrorCode.UNKNOWN_MEMBER_ID, errorMessage: 'Member b is not a member of group app.' });
  });

  it('the group config streams.session.timeout.ms and streams.heartbeat.interval.ms override the broker\'s', async () => {
    const { h, a } = await readyGroup();
    h.groupConfigs.set(SG, { 'streams.session.timeout.ms': '50000', 'streams.heartbeat.interval.ms': '7000' });
    expect(a.heartbeat().heartbeatIntervalMs).to.equal(7000);
    await h.advance(47_000);
    expect(a.heartbeat().errorCode).to.equal(ErrorCode.NONE);
  });

  it('fences epochs it does not know, with Kafka\'s messages', async () => {
    const { a } = await readyGroup();
    expect(a.heartbeat({ memberEpoch: 9 })).to.include({
      errorCode: ErrorCode.FENCED_MEMBER_EPOCH,
      errorMessage: 'The streams group member has a greater member epoch (9) than the one known by the group coordinator (2). The member must abandon all its partitions and rejoin.',
    });
    // The previous epoch with tasks within its assignment: its last answer may have been lost.
    expect(a.heartbeat({ memberEpoch: 1, activeTasks: [] }).errorCode).to.equal(ErrorCode.NONE);
    expect(a.heartbeat({ memberEpoch: 0 }).errorCode).to.equal(ErrorCode.INVALID_REQUEST);
  });

  it('refuses invalid requests with Kafka\'s messages', async () => {
    const h = await Harness.start();
    const send = (opts: Partial<StreamsHeartbeatRequest>) => {
      const r = h.coordinator.streamsGroupHeartbeat(request({ rebalanceTimeoutMs: 1000, topology: TOPOLOGY, activeTasks: [], standbyTasks: [], warmupTasks: [], ...opts }));
      return [r.errorCode, r.errorMessage];
    };
    const invalid = (message: string) => [ErrorCode.INVALID_REQUEST, message];
    expect(send({ memberId: '' })).to.deep.equal(invalid('MemberId can\'t be empty.'));
    expect(send({ rebalanceTimeoutMs: -1 })).to.deep.equal(invalid('RebalanceTimeoutMs must be provided in first request.'));
    expect(send({ topology: null })).to.deep.equal(invalid('Topology must be non-null when (re-)joining.'));
    expect(send({ activeTasks: [{ subtopologyId: '0', partitions: [0] }], standbyTasks: [], warmupTasks: [] }))
      .to.deep.equal(invalid('ActiveTasks must be empty when (re-)joining.'));
    expect(send({ activeTasks: [], standbyTasks: null, warmupTasks: [] })).to.deep.equal(invalid('StandbyTasks must be empty when (re-)joining.'));
    expect(send({ memberEpoch: 1, topology: null, activeTasks: [], standbyTasks: null })).to.deep.equal(invalid('If one task-type is non-null, all must be non-null.'));
    expect(send({ memberEpoch: 3, topology: TOPOLOGY })).to.deep.equal(invalid('Topology can only be provided when (re-)joining.'));
    expect(send({ memberEpoch: -3, topology: null })).to.deep.equal(invalid('MemberEpoch is -3, but must be greater than or equal to -2.'));
    expect(send({ sourceTopicRegexes: ['w.*'] })).to.deep.equal(invalid('Regular expressions for source topics are not supported yet.'));
    expect(send({ memberEpoch: 1, topology: null })).to.deep.equal([ErrorCode.GROUP_ID_NOT_FOUND, 'Streams group app not found.']);
    const duplicate = { ...TOPOLOGY, subtopologies: [TOPOLOGY.subtopologies[0], TOPOLOGY.subtopologies[0]] };
    expect(send({ topology: duplicate })[0]).to.equal(ErrorCode.STREAMS_INVALID_TOPOLOGY);
  });

  it('a newer topology epoch replaces the group\'s; an older one is reported stale', async () => {
    const { h, a } = await readyGroup();
    const b = new Member(h, 'b');
    expect(b.join({ topology: { ...TOPOLOGY, epoch: 0 } }).status).to.deep.include({
      statusCode: StreamsStatus.StaleTopology, statusDetail: 'The member\'s topology epoch 0 is behind the group\'s topology epoch 1.',
    });
    const c = new Member(h, 'c');
    c.join({ topology: { ...TOPOLOGY, epoch: 2 } });
    expect(h.coordinator.streamsGroupDescribe(SG).topology!.epoch).to.equal(2);
    settle([a, b, c]);
    expect([...a.tasks(), ...b.tasks(), ...c.tasks()].sort()).to.deep.equal(ALL_TASKS);
  });

  it('a shutdown request is passed to every member', async () => {
    const { h, a } = await readyGroup();
    const b = new Member(h, 'b');
    b.join();
    b.heartbeat({ shutdownApplication: true });
    expect(a.heartbeat().status.map((s) => s.statusCode)).to.deep.equal([StreamsStatus.ShutdownApplication]);
  });

  it('a static member leaving with -2 keeps its place; its replacement takes over its tasks', async () => {
    const h = await Harness.start();
    h.topics.set('words', 4);
    const a = new Member(h, 'a', 'p1', { instanceId: 'i-1' });
    a.join();
    a.heartbeat();
    const tasks = a.tasks();
    expect(a.leave(-2)).to.include({ errorCode: 0, memberEpoch: -2 });
    expect(new Member(h, 'b', 'p1', { instanceId: 'i-1' }).join()).to.include({ errorCode: 0 });
    const b = new Member(h, 'b', 'p1', { instanceId: 'i-1' });
    b.epoch = h.coordinator.streamsGroupDescribe(SG).members[0].memberEpoch;
    settle([b]);
    expect(b.tasks()).to.deep.equal(tasks);
    expect(h.coordinator.streamsGroupDescribe(SG).members.map((m) => m.memberId)).to.deep.equal(['b']);
    // A live static member's instance id is not free.
    expect(new Member(h, 'c', 'p2', { instanceId: 'i-1' }).join().errorCode).to.equal(ErrorCode.UNRELEASED_INSTANCE_ID);
  });

  it('shares its ids with the other kinds of groups, lists as "streams" and commits offsets at member epochs', async () => {
    const { h, a } = await readyGroup();
    const consumer = await h.coordinator.consumerGroupHeartbeat({
      apiVersion: 1, groupId: SG, memberId: 'x', memberEpoch: 0, instanceId: null, rackId: null, rebalanceTimeoutMs: 1000,
      subscribedTopicNames: ['words'], subscribedTopicRegex: null, serverAssignor: null, topicPartitions: [], clientId: 'c', clientHost: '/h',
    });
    expect(consumer).to.include({ errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: 'Group app is not a consumer group.' });
    await h.coordinator.consumerGroupHeartbeat({
      apiVersion: 1, groupId: 'cg', memberId: 'x', memberEpoch: 0, instanceId: null, rackId: null, rebalanceTimeoutMs: 1000,
      subscribedTopicNames: ['words'], subscribedTopicRegex: null, serverAssignor: null, topicPartitions: [], clientId: 'c', clientHost: '/h',
    });
    expect(new Member(h, 'y').join({ groupId: 'cg' })).to.include({ errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: 'Group cg is not a streams group.' });
    expect(h.coordinator.streamsGroupDescribe('cg')).to.include({ errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: 'Group cg is not a streams group.' });
    expect(h.coordinator.streamsGroupDescribe('nope')).to.include({ errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: 'Group nope not found.' });
    const classicJoin = h.join(SG);
    await flush();
    expect(classicJoin.value).to.include({ errorCode: ErrorCode.INCONSISTENT_GROUP_PROTOCOL });

    const commit = (memberId: string, generationId: number) => h.coordinator.commitOffsets({
      groupId: SG, memberId, generationId, groupInstanceId: null, apiVersion: 9, retentionTimeMs: -1,
      partitions: [{ topic: 'words', partition: 0, offset: 42, leaderEpoch: -1, metadata: '', commitTimestamp: -1 }],
    });
    expect(await commit('a', 1)).to.deep.equal([ErrorCode.STALE_MEMBER_EPOCH]);
    expect(await commit('a', a.epoch)).to.deep.equal([0]);
    expect(h.coordinator.fetchOffsets(SG, null, false, { memberId: 'a', memberEpoch: a.epoch }).topics[0].partitions[0]).to.include({ offset: 42 });
    expect(h.coordinator.listGroups([], []).groups.map((g) => `${g.groupId}:${g.type}:${g.protocolType}:${g.state}`).sort())
      .to.deep.equal(['app:streams:streams:Stable', 'cg:consumer:consumer:Stable']);
    expect(h.coordinator.listGroups([], ['streams']).groups.map((g) => g.groupId)).to.deep.equal(['app']);
    expect(await h.coordinator.deleteGroups([SG])).to.deep.equal([{ groupId: SG, errorCode: ErrorCode.NON_EMPTY_GROUP }]);
    a.leave();
    expect(await h.coordinator.deleteGroups([SG])).to.deep.equal([{ groupId: SG, errorCode: 0 }]);
    expect(h.coordinator.streamsGroupDescribe(SG).errorCode).to.equal(ErrorCode.GROUP_ID_NOT_FOUND);
  });
});

describe('streams groups: the sticky task assignor', () => {
  const members = (spec: Record<string, [string, TasksTuple?]>) =>
    new Map(Object.entries(spec).map(([id, [processId, previous]]) => [id, { processId, previous: previous ?? NO_TASKS }]));
  const count = (a: Map<string, TasksTuple>, id: string, kind: 'active' | 'standby') =>
    [...a.get(id)![kind].values()].reduce((n, ps) => n + ps.size, 0);

  it('balances active tasks within one of each other', () => {
    const a = assignTasks({ members: members({ m1: ['p1'], m2: ['p2'], m3: ['p3'] }), subtopologies: new Map([['0', 4], ['1', 3]]), numStandbyReplicas: 0 });
    const counts = ['m1', 'm2', 'm3'].map((id) => count(a, id, 'active'));
    expect(counts.reduce((x, y) => x + y)).to.equal(7);
    expect(Math.max(...counts) - Math.min(...counts)).to.be.at.most(1);
  });

  it('keeps tasks with their previous owners when a member joins, moving only what balance needs', () => {
    const before = assignTasks({ members: members({ m1: ['p1'], m2: ['p2'] }), subtopologies: new Map([['0', 6]]), numStandbyReplicas: 0 });
    const after = assignTasks({
      members: members({ m1: ['p1', before.get('m1')], m2: ['p2', before.get('m2')], m3: ['p3'] }),
      subtopologies: new Map([['0', 6]]), numStandbyReplicas: 0,
    });
    for (const id of ['m1', 'm2']) {
      const kept = [...after.get(id)!.active.get('0')!].every((p) => before.get(id)!.active.get('0')!.has(p));
      expect(kept, `${id} kept only its own tasks`).to.equal(true);
      expect(count(after, id, 'active')).to.equal(2);
    }
    expect(count(after, 'm3', 'active')).to.equal(2);
  });

  it('places standbys on other processes than the active, and none where there is no other process', () => {
    const a = assignTasks({ members: members({ m1: ['p1'], m2: ['p1'], m3: ['p2'] }), subtopologies: new Map([['0', 4]]), numStandbyReplicas: 1 });
    for (let p = 0; p < 4; p++) {
      const activeProcess = ['m1', 'm2', 'm3'].find((id) => a.get(id)!.active.get('0')?.has(p))!;
      const standbys = ['m1', 'm2', 'm3'].filter((id) => a.get(id)!.standby.get('0')?.has(p));
      expect(standbys).to.have.length(1);
      const processOf = (id: string) => (id === 'm3' ? 'p2' : 'p1');
      expect(processOf(standbys[0])).to.not.equal(processOf(activeProcess));
    }
    const single = assignTasks({ members: members({ m1: ['p1'] }), subtopologies: new Map([['0', 2]]), numStandbyReplicas: 1 });
    expect(single.get('m1')!.standby.size).to.equal(0);
  });

  it('moves an active task to the member that had it as standby when its owner is gone', () => {
    const previous: TasksTuple = { active: new Map(), standby: taskSetFromWire([{ subtopologyId: '0', partitions: [1] }]), warmup: new Map() };
    const a = assignTasks({ members: members({ m1: ['p1'], m2: ['p2', previous] }), subtopologies: new Map([['0', 2]]), numStandbyReplicas: 0 });
    expect([...a.get('m2')!.active.get('0')!]).to.deep.equal([1]);
  });
});
