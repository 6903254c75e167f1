import { expect } from 'chai';
import { KafkaConnection } from '../../src/admin/connection';
import { listGroups } from '../../src/admin/groups';
import { produceMessages } from '../../src/admin/messages';
import { withBroker } from '../helpers/broker';
import { jsonOf, runFjord } from '../helpers/fjord-cli';

interface DescribedGroup {
  groupId: string;
  type: string;
  state: string;
  members: { memberId: string; clientId: string; assignment: { topic: string; partitions: number[] }[] }[];
  offsets: { topic: string; partition: number; committedOffset: number | null; latestOffset: number; lag: number | null }[];
  totalLag: number;
}

describe('fjord groups', function () {
  this.timeout(120_000);
  const broker = withBroker();
  let bootstrap: string[];
  let connection: KafkaConnection;

  const describeGroup = async (id: string) => (jsonOf(await runFjord('groups', 'describe', id, ...bootstrap, '--json')) as DescribedGroup[])[0];

  before(async () => {
    bootstrap = ['--bootstrap-server', `127.0.0.1:${broker.current().port}`];
    connection = new KafkaConnection({ bootstrapServers: [`127.0.0.1:${broker.current().port}`] });
    await connection.admin().createTopics({ topics: ['events'], partitions: 1, replicas: 1 });
    await produceMessages(connection, 'events', Array.from({ length: 10 }, (_, i) => ({ key: null, value: Buffer.from(`e${i}`) })));
  });
  after(async () => { await connection.close(); });

  it('shows the lag of a group that consumed half, resets its offsets (dry run, then --execute) and deletes it', async () => {
    const consumed = await runFjord('consume', ...bootstrap, '--topic', 'events', '--group', 'half', '--from-beginning', '--max-messages', '5');
    expect(consumed.status, consumed.stderr).to.equal(0);
    expect(consumed.stdout).to.equal('e0\ne1\ne2\ne3\ne4\n');

    const listed = jsonOf(await runFjord('groups', 'list', ...bootstrap, '--json')) as { groupId: string }[];
    expect(listed).to.deep.include({ groupId: 'half', type: 'classic', state: 'Empty', protocolType: 'consumer' });

    const half = await describeGroup('half');
    expect(half).to.include({ groupId: 'half', type: 'classic', state: 'Empty', totalLag: 5 });
    expect(half.offsets).to.deep.equal([{ topic: 'events', partition: 0, committedOffset: 5, latestOffset: 10, lag: 5, memberId: null }]);
    const table = await runFjord('groups', 'describe', 'half', ...bootstrap);
    expect(table.stdout).to.contain('total lag 5').and.match(/events\s+0\s+5\s+10\s+5/);

    // Without --execute nothing changes (a warning says so); the plan is printed either way.
    const dry = await runFjord('groups', 'reset-offsets', ...bootstrap, '--group', 'half', '--topic', 'events', '--to-earliest', '--json');
    expect(jsonOf(dry)).to.deep.equal([{ topic: 'events', partition: 0, currentOffset: 5, newOffset: 0 }]);
    expect(dry.stderr).to.contain('--execute');
    expect((await describeGroup('half')).totalLag).to.equal(5);

    const executed = await runFjord('groups', 'reset-offsets', ...bootstrap, '--group', 'half', '--topic', 'events:0', '--shift-by', '-3', '--execute');
    expect(executed.status, executed.stderr).to.equal(0);
    expect(executed.stdout).to.match(/GROUP\s+TOPIC\s+PARTITION\s+CURRENT-OFFSET\s+NEW-OFFSET\nhalf\s+events\s+0\s+5\s+2\n/);
    expect((await describeGroup('half')).offsets[0]).to.include({ committedOffset: 2, lag: 8 });

    // An offset past the log end is kept at the log end, as Kafka's tool does.
    expect(jsonOf(await runFjord('groups', 'reset-offsets', ...bootstrap, '--group', 'half', '--all-topics', '--to-offset', '99', '--execute', '--json')))
      .to.deep.equal([{ topic: 'events', partition: 0, currentOffset: 2, newOffset: 10 }]);
    expect((await describeGroup('half')).totalLag).to.equal(0);

    const deleted = await runFjord('groups', 'delete', 'half', ...bootstrap, '--json');
    expect(jsonOf(deleted)).to.deep.equal({ deleted: ['half'] });
    expect((await listGroups(connection)).map((g) => g.groupId)).to.not.include('half');
  });

  it('refuses to reset or delete a group with members, with Kafka\'s error, and describes its members', async () => {
    const consumer = connection.consumer({ groupId: 'busy', clientId: 'busy-client' });
    const stream = await consumer.consume({ topics: ['events'], mode: 'earliest', autocommit: false });
    try {
      const busy = await describeGroup('busy');
      expect(busy.state).to.equal('Stable');
      expect(busy.members).to.have.length(1);
      expect(busy.members[0]).to.include({ clientId: 'busy-client' });
      expect(busy.members[0].assignment).to.deep.equal([{ topic: 'events', partitions: [0] }]);

      const reset = await runFjord('groups', 'reset-offsets', ...bootstrap, '--group', 'busy', '--topic', 'events', '--to-latest', '--execute');
      expect(reset.status).to.equal(1);
      expect(reset.stderr).to.equal('fjord: NON_EMPTY_GROUP: Assignments can only be reset if the group \'busy\' is inactive, but the current state is Stable.\n');
      const del = await runFjord('groups', 'delete', 'busy', ...bootstrap);
      expect(del.status).to.equal(1);
      expect(del.stderr).to.match(/^fjord: NON_EMPTY_GROUP: /);
    } finally {
      await stream.close();
      await consumer.close();
    }
    const unknown = await runFjord('groups', 'describe', 'no-such-group', ...bootstrap);
    expect(unknown.status).to.equal(1);
    expect(unknown.stderr).to.equal('fjord: GROUP_ID_NOT_FOUND: Group no-such-group not found.\n');
  });

  it('lists and describes a KIP-848 consumer group (ConsumerGroupDescribe)', async () => {
    const consumer = connection.consumer({ groupId: 'next-gen', clientId: 'kip848-client', groupProtocol: 'consumer' });
    const stream = await consumer.consume({ topics: ['events'], mode: 'earliest', autocommit: false });
    try {
      const listed = jsonOf(await runFjord('groups', 'list', ...bootstrap, '--json')) as { groupId: string }[];
      expect(listed).to.deep.include({ groupId: 'next-gen', type: 'consumer', state: 'Stable', protocolType: 'consumer' });
      const described = await describeGroup('next-gen');
      expect(described).to.include({ type: 'consumer', state: 'Stable', totalLag: 0 });
      expect(described.members.map((m) => ({ clientId: m.clientId, assignment: m.assignment })))
        .to.deep.equal([{ clientId: 'kip848-client', assignment: [{ topic: 'events', partitions: [0] }] }]);
      // Assigned but nothing committed: no lag to tell.
      expect(described.offsets).to.deep.equal([{ topic: 'events', partition: 0, committedOffset: null, latestOffset: 10, lag: null, memberId: described.members[0].memberId }]);
    } finally {
      await stream.close();
      await consumer.close();
    }
  });
});
