// SCRAM users in a cluster of two brokers on etcd: a user created through broker 1 authenticates on
// broker 2 (its cache follows /scram/<user>; kafkajs logs in on broker 2's SASL_PLAINTEXT listener
// with SCRAM-SHA-256 and SCRAM-SHA-512), a change through broker 2 is seen by broker 1, a
// deleted credential stops authenticating everywhere, a user name that needs URI-encoding round
// trips, both brokers answer DescribeUserScramCredentials alike, and racing alterations of the same
// user from both brokers each apply once (the etcd transaction is conditioned on the user's key).
import { expect } from 'chai';
import { Kafka, logLevel, type SASLOptions } from 'kafkajs';
import { ApiKey } from '../../src/protocol/generated';
import type { AlterUserScramCredentialsResponse } from '../../src/protocol/generated/AlterUserScramCredentialsResponse';
import type { DescribeUserScramCredentialsResponse } from '../../src/protocol/generated/DescribeUserScramCredentialsResponse';
import type { ScramMechanism } from '../../src/security/sasl';
import { withEtcdBrokers } from '../helpers/etcd-brokers';
import { eventually } from '../helpers/eventually';
import { authenticates, upsertion } from '../helpers/scram';

const SHA256 = 1;

describe('SCRAM credentials in a cluster', function () {
  this.timeout(60_000);
  const cluster = withEtcdBrokers([1, 2], {
    // Admin requests and replication on PLAINTEXT, SCRAM logins on SASL_PLAINTEXT.
    listeners: 'PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0', 'inter.broker.listener.name': 'PLAINTEXT',
    'sasl.enabled.mechanisms': 'SCRAM-SHA-256,SCRAM-SHA-512', 'connection.failed.authentication.delay.ms': '0',
  });
  const alter = async (via: number, deletions: { name: string; mechanism: number }[], upsertions: ReturnType<typeof upsertion>[]) =>
    (await cluster.request<AlterUserScramCredentialsResponse>(via, ApiKey.AlterUserScramCredentials, 0, { deletions, upsertions })).results;
  const describeAll = async (via: number) =>
    (await cluster.request<DescribeUserScramCredentialsResponse>(via, ApiKey.DescribeUserScramCredentials, 0, { users: null })).results;
  const canLogIn = (nodeId: number, mechanism: ScramMechanism, user: string, password: string) =>
    authenticates(cluster.broker(nodeId).broker.controller, mechanism, user, password);

  /** Whether kafkajs logs in on the broker's SASL_PLAINTEXT listener with these credentials (and lists topics). */
  const kafkajsLogsIn = async (nodeId: number, sasl: SASLOptions): Promise<boolean> => {
    const port = cluster.broker(nodeId).listeners.get('SASL_PLAINTEXT')!.port;
    const admin = new Kafka({ clientId: 'scram-cluster', brokers: [`127.0.0.1:${port}`], sasl, logLevel: logLevel.NOTHING, retry: { retries: 0 } }).admin();
    try {
      await admin.connect();
      await admin.listTopics();
      return true;
    } catch {
      return false;
    } finally {
      await admin.disconnect();
    }
  };

  it('a user created through one broker authenticates on the other; changes and deletions reach every broker', async () => {
    expect(await alter(1, [], [upsertion('alice', 'SCRAM-SHA-256', 'alice-secret', 8192), upsertion('team/ops%1', 'SCRAM-SHA-512', 'ops')]))
      .to.deep.equal([{ user: 'alice', errorCode: 0, errorMessage: null }, { user: 'team/ops%1', errorCode: 0, errorMessage: null }]);
    // The writing broker answers once its own cache has the write; the other follows the watch.
    expect(canLogIn(1, 'SCRAM-SHA-256', 'alice', 'alice-secret')).to.equal(true);
    await eventually(() => canLogIn(2, 'SCRAM-SHA-256', 'alice', 'alice-secret'), 'broker 2 to know alice', 10_000);
    expect(canLogIn(2, 'SCRAM-SHA-256', 'alice', 'wrong')).to.equal(false);
    await eventually(() => canLogIn(2, 'SCRAM-SHA-512', 'team/ops%1', 'ops'), 'broker 2 to know team/ops%1', 10_000);
    expect(await kafkajsLogsIn(2, { mechanism: 'scram-sha-256', username: 'alice', password: 'alice-secret' })).to.equal(true);
    expect(await kafkajsLogsIn(2, { mechanism: 'scram-sha-512', username: 'team/ops%1', password: 'ops' })).to.equal(true);
    expect(await kafkajsLogsIn(2, { mechanism: 'scram-sha-512', username: 'alice', password: 'alice-secret' })).to.equal(false);

    expect(await alter(2, [], [upsertion('alice', 'SCRAM-SHA-256', 'new-secret', 4096)])).to.deep.equal([{ user: 'alice', errorCode: 0, errorMessage: null }]);
    await eventually(() => canLogIn(1, 'SCRAM-SHA-256', 'alice', 'new-secret'), 'broker 1 to see alice\'s new password', 10_000);
    expect(canLogIn(1, 'SCRAM-SHA-256', 'alice', 'alice-secret')).to.equal(false);

    const expected = [
      { user: 'alice', errorCode: 0, errorMessage: null, credentialInfos: [{ mechanism: SHA256, iterations: 4096 }] },
      { user: 'team/ops%1', errorCode: 0, errorMessage: null, credentialInfos: [{ mechanism: 2, iterations: 4096 }] },
    ];
    expect(await describeAll(1)).to.deep.equal(expected);
    expect(await describeAll(2)).to.deep.equal(expected);

    expect(await alter(1, [{ name: 'alice', mechanism: SHA256 }], [])).to.deep.equal([{ user: 'alice', errorCode: 0, errorMessage: null }]);
    await eventually(() => !canLogIn(2, 'SCRAM-SHA-256', 'alice', 'new-secret'), 'broker 2 to forget alice', 10_000);
    expect(await kafkajsLogsIn(2, { mechanism: 'scram-sha-256', username: 'alice', password: 'new-secret' })).to.equal(false);
    expect(cluster.broker(2).broker.controller.scramUsers()).to.deep.equal(['team/ops%1']);
  });

  it('racing alterations of the same user from both brokers each apply once, none lost', async () => {
    const users = Array.from({ length: 4 }, (_, i) => `racer-${i}`);
    // Each user gets SHA-256 through broker 1 and SHA-512 through broker 2 at the same time: the
    // loser of each etcd compare checks again on the winner's credentials and adds its own.
    const results = await Promise.all(users.flatMap((user) => [
      alter(1, [], [upsertion(user, 'SCRAM-SHA-256', `${user}-256`)]),
      alter(2, [], [upsertion(user, 'SCRAM-SHA-512', `${user}-512`)]),
    ]));
    expect(results.flat().map((r) => r.errorCode)).to.deep.equal(Array(8).fill(0));
    for (const nodeId of [1, 2]) {
      for (const user of users) {
        await eventually(() => canLogIn(nodeId, 'SCRAM-SHA-256', user, `${user}-256`) && canLogIn(nodeId, 'SCRAM-SHA-512', user, `${user}-512`),
          `broker ${nodeId} to know both of ${user}'s credentials`, 10_000);
      }
    }
  });
});
