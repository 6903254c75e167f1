// SCRAM users on a single broker, over the wire: AlterUserScramCredentials (51) and
// DescribeUserScramCredentials (50) with Kafka 4.4's answers and refusals, the credentials read by a
// SCRAM exchange at once (a new user authenticates, a deleted one no longer does), CLUSTER
// authorization of both APIs (the operations asked, and the StandardAuthorizer's denial over the
// wire), and the credentials surviving a restart (kept in the metadata store).
import { expect } from 'chai';
import { startBroker, type RunningBroker } from '../../src/broker';
import { ApiKey } from '../../src/protocol/generated';
import type { AlterUserScramCredentialsResponse } from '../../src/protocol/generated/AlterUserScramCredentialsResponse';
import type { DescribeUserScramCredentialsResponse } from '../../src/protocol/generated/DescribeUserScramCredentialsResponse';
import { ErrorCode } from '../../src/common/errors';
import { STANDARD_AUTHORIZER_CLASS } from '../../src/config/definitions';
import { AclOperation, ResourceType } from '../../src/security/acl';
import { describeUserScramCredentials } from '../../src/handlers/describe-user-scram-credentials';
import { alterUserScramCredentials } from '../../src/handlers/alter-user-scram-credentials';
import { withRestartableBroker } from '../helpers/broker';
import { RawClient } from '../helpers/raw-client';
import { allowAllRequest } from '../helpers/request-context';
import { authenticates, upsertion } from '../helpers/scram';

const SHA256 = 1;
const SHA512 = 2;

describe('SCRAM credentials (single broker): AlterUserScramCredentials / DescribeUserScramCredentials', function () {
  this.timeout(60_000);
  const broker = withRestartableBroker({ nodeId: 1 });
  const alter = (deletions: { name: string; mechanism: number }[], upsertions: ReturnType<typeof upsertion>[]) =>
    broker.client.request<AlterUserScramCredentialsResponse>(ApiKey.AlterUserScramCredentials, 0, { deletions, upsertions });
  const describeUsers = (users: string[] | null) =>
    broker.client.request<DescribeUserScramCredentialsResponse>(ApiKey.DescribeUserScramCredentials, 0, { users: users && users.map((name) => ({ name })) });

  it('creates users whose next authentication succeeds, and describes them without secrets', async () => {
    const controller = broker.running.broker.controller;
    expect(authenticates(controller, 'SCRAM-SHA-256', 'alice', 'alice-secret')).to.equal(false);
    expect((await alter([], [upsertion('alice', 'SCRAM-SHA-256', 'alice-secret', 8192), upsertion('bob', 'SCRAM-SHA-512', 'bob-secret')])).results)
      .to.deep.equal([{ user: 'alice', errorCode: 0, errorMessage: null }, { user: 'bob', errorCode: 0, errorMessage: null }]);
    expect((await alter([], [upsertion('alice', 'SCRAM-SHA-512', 'alice-512')])).results).to.deep.equal([{ user: 'alice', errorCode: 0, errorMessage: null }]);

    expect(authenticates(controller, 'SCRAM-SHA-256', 'alice', 'alice-secret')).to.equal(true);
    expect(authenticates(controller, 'SCRAM-SHA-512', 'alice', 'alice-512')).to.equal(true);
    expect(authenticates(controller, 'SCRAM-SHA-256', 'alice', 'alice-512')).to.equal(false);
    expect(authenticates(controller, 'SCRAM-SHA-512', 'bob', 'bob-secret')).to.equal(true);
    expect(authenticates(controller, 'SCRAM-SHA-256', 'bob', 'bob-secret')).to.equal(false);

    for (const users of [null, []]) {
      expect(await describeUsers(users)).to.deep.equal({
        throttleTimeMs: 0, errorCode: 0, errorMessage: null, results: [
          { user: 'alice', errorCode: 0, errorMessage: null, credentialInfos: [{ mechanism: SHA256, iterations: 8192 }, { mechanism: SHA512, iterations: 4096 }] },
          { user: 'bob', errorCode: 0, errorMessage: null, credentialInfos: [{ mechanism: SHA512, iterations: 4096 }] },
        ],
      });
    }
    expect((await describeUsers(['bob', 'nobody', 'alice', 'bob'])).results).to.deep.equal([
      { user: 'bob', errorCode: ErrorCode.DUPLICATE_RESOURCE, errorMessage: 'Cannot describe SCRAM credentials for the same user twice in a single request: bob', credentialInfos: [] },
      { user: 'nobody', errorCode: ErrorCode.RESOURCE_NOT_FOUND, errorMessage: 'Attempt to describe a user credential that does not exist: nobody', credentialInfos: [] },
      { user: 'alice', errorCode: 0, errorMessage: null, credentialInfos: [{ mechanism: SHA256, iterations: 8192 }, { mechanism: SHA512, iterations: 4096 }] },
    ]);
  });

  it('refuses with Kafka\'s codes and messages, per user, and stores the rest of the request', async () => {
    const res = await alter(
      [{ name: 'alice', mechanism: SHA256 }, { name: 'dave', mechanism: SHA256 }, { name: 'erin', mechanism: 0 }, { name: 'frank', mechanism: SHA512 }],
      [upsertion('alice', 'SCRAM-SHA-512', 'x'), upsertion('', 'SCRAM-SHA-256', 'x'), upsertion('gina', 'SCRAM-SHA-256', 'x', 4095),
        upsertion('hank', 'SCRAM-SHA-256', 'x', 16385), { ...upsertion('ivan', 'SCRAM-SHA-256', 'x'), mechanism: 3 },
        upsertion('judy', 'SCRAM-SHA-256', 'judy-secret', 16384), upsertion('kate', 'SCRAM-SHA-256', 'x'), upsertion('kate', 'SCRAM-SHA-512', 'x')]);
    expect(res.results).to.deep.equal([
      { user: 'judy', errorCode: 0, errorMessage: null },
      { user: 'dave', errorCode: ErrorCode.RESOURCE_NOT_FOUND, errorMessage: 'Attempt to delete a user credential that does not exist' },
      { user: 'erin', errorCode: ErrorCode.UNSUPPORTED_SASL_MECHANISM, errorMessage: 'Unknown SCRAM mechanism' },
      { user: 'frank', errorCode: ErrorCode.RESOURCE_NOT_FOUND, errorMessage: 'Attempt to delete a user credential that does not exist' },
      { user: 'alice', errorCode: ErrorCode.DUPLICATE_RESOURCE, errorMessage: 'A user credential cannot be altered twice in the same request' },
      { user: '', errorCode: ErrorCode.UNACCEPTABLE_CREDENTIAL, errorMessage: 'Username must not be empty' },
      { user: 'gina', errorCode: ErrorCode.UNACCEPTABLE_CREDENTIAL, errorMessage: 'Too few iterations' },
      { user: 'hank', errorCode: ErrorCode.UNACCEPTABLE_CREDENTIAL, errorMessage: 'Too many iterations' },
      { user: 'ivan', errorCode: ErrorCode.UNSUPPORTED_SASL_MECHANISM, errorMessage: 'Unknown SCRAM mechanism' },
      { user: 'kate', errorCode: ErrorCode.DUPLICATE_RESOURCE, errorMessage: 'A user credential cannot be altered twice in the same request' },
    ]);
    const controller = broker.running.broker.controller;
    // alice's deletion was dropped with her upsertion; judy is in; the refused users are not.
    expect(authenticates(controller, 'SCRAM-SHA-256', 'alice', 'alice-secret')).to.equal(true);
    expect(authenticates(controller, 'SCRAM-SHA-256', 'judy', 'judy-secret')).to.equal(true);
    expect(controller.scramUsers()).to.deep.equal(['alice', 'bob', 'judy']);
  });

  it('a deleted credential stops authenticating; a user without any is gone', async () => {
    expect((await alter([{ name: 'alice', mechanism: SHA256 }, { name: 'judy', mechanism: SHA256 }], [])).results).to.deep.equal([
      { user: 'alice', errorCode: 0, errorMessage: null }, { user: 'judy', errorCode: 0, errorMessage: null },
    ]);
    const controller = broker.running.broker.controller;
    expect(authenticates(controller, 'SCRAM-SHA-256', 'alice', 'alice-secret')).to.equal(false);
    expect(authenticates(controller, 'SCRAM-SHA-512', 'alice', 'alice-512')).to.equal(true);
    expect(authenticates(controller, 'SCRAM-SHA-256', 'judy', 'judy-secret')).to.equal(false);
    expect((await describeUsers(null)).results.map((r) => r.user)).to.deep.equal(['alice', 'bob']);
  });

  it('needs ALTER / DESCRIBE on the CLUSTER: CLUSTER_AUTHORIZATION_FAILED otherwise, as Kafka answers', async () => {
    const asked: [AclOperation, ResourceType, string][] = [];
    const deny = { ...allowAllRequest, authorize: (op: AclOperation, type: ResourceType, name: string) => (asked.push([op, type, name]), false) };
    const ctx = { apiKey: 0, apiVersion: 0, correlationId: 1, clientId: null, peer: '127.0.0.1:1', responseBuffer: Buffer.alloc, closeConnection: () => undefined, onConnectionClose: () => () => undefined, ...deny };
    const controller = broker.running.broker.controller;
    const denied = { errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: 'Cluster authorization failed.' };

    const altered = await alterUserScramCredentials.bind({ controller }).handle(
      { deletions: [{ name: 'bob', mechanism: SHA512 }], upsertions: [upsertion('zed', 'SCRAM-SHA-256', 'x'), upsertion('bob', 'SCRAM-SHA-256', 'x')] }, ctx);
    expect(altered).to.deep.equal({ throttleTimeMs: 0, results: [{ user: 'bob', ...denied }, { user: 'zed', ...denied }] });
    expect(controller.scramUsers()).to.deep.equal(['alice', 'bob']);

    const described = await describeUserScramCredentials.bind({ controller }).handle({ users: [{ name: 'bob' }] }, ctx);
    expect(described).to.deep.equal({ throttleTimeMs: 0, ...denied, results: [{ user: '', ...denied, credentialInfos: [] }] });
    expect(asked).to.deep.equal([[AclOperation.ALTER, ResourceType.CLUSTER, 'kafka-cluster'], [AclOperation.DESCRIBE, ResourceType.CLUSTER, 'kafka-cluster']]);
  });

  it('keeps the credentials across a restart', async () => {
    await broker.restart();
    const controller = broker.running.broker.controller;
    expect(authenticates(controller, 'SCRAM-SHA-512', 'alice', 'alice-512')).to.equal(true);
    expect(authenticates(controller, 'SCRAM-SHA-512', 'bob', 'bob-secret')).to.equal(true);
    expect(authenticates(controller, 'SCRAM-SHA-512', 'bob', 'wrong')).to.equal(false);
    expect((await describeUsers(null)).results).to.deep.equal([
      { user: 'alice', errorCode: 0, errorMessage: null, credentialInfos: [{ mechanism: SHA512, iterations: 4096 }] },
      { user: 'bob', errorCode: 0, errorMessage: null, credentialInfos: [{ mechanism: SHA512, iterations: 4096 }] },
    ]);
  });
});

describe('SCRAM credential APIs with the StandardAuthorizer on', function () {
  this.timeout(30_000);
  let running: RunningBroker;
  before(async () => {
    running = await startBroker({ logLevel: 'silent', config: { 'authorizer.class.name': STANDARD_AUTHORIZER_CLASS } });
  });
  after(async () => {
    await running?.close();
  });

  it('an ANONYMOUS client without ACLs gets CLUSTER_AUTHORIZATION_FAILED for both, and nothing is stored', async () => {
    const c = await RawClient.connect(running.port);
    try {
      const denied = { errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: 'Cluster authorization failed.' };
      expect((await c.request<AlterUserScramCredentialsResponse>(ApiKey.AlterUserScramCredentials, 0,
        { deletions: [], upsertions: [upsertion('mallory', 'SCRAM-SHA-256', 'x')] })).results).to.deep.equal([{ user: 'mallory', ...denied }]);
      expect(running.broker.controller.scramUsers()).to.deep.equal([]);
      expect(await c.request<DescribeUserScramCredentialsResponse>(ApiKey.DescribeUserScramCredentials, 0, { users: null }))
        .to.deep.equal({ throttleTimeMs: 0, ...denied, results: [] });
    } finally {
      c.close();
    }
  });
});
