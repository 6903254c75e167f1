// The ACL APIs with the StandardAuthorizer on (authorizer.class.name), over the wire: Kafka's
// validation of creations and filters, ANY and MATCH filters, deletions answered per filter, the
// APIs' own CLUSTER checks, ACLs kept across a restart and applied without one (authorized
// operations in Metadata), the config refusing an authorizer Fjord does not have, and kafkajs's admin
// client creating, describing and deleting ACLs.
import { expect } from 'chai';
import { Kafka, logLevel, AclResourceTypes, AclOperationTypes, AclPermissionTypes, ResourcePatternTypes } from 'kafkajs';
import { mkdtemp, rm } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { ApiKey } from '../../src/protocol/generated';
import type { DescribeAclsResponse } from '../../src/protocol/generated/DescribeAclsResponse';
import type { CreateAclsResponse } from '../../src/protocol/generated/CreateAclsResponse';
import type { DeleteAclsResponse } from '../../src/protocol/generated/DeleteAclsResponse';
import type { MetadataResponse } from '../../src/protocol/generated/MetadataResponse';
import type { DescribeClusterResponse } from '../../src/protocol/generated/DescribeClusterResponse';
import { ErrorCode } from '../../src/common/errors';
import { AclOperation as Op, AclPermissionType, PatternType, ResourceType as RT } from '../../src/security/acl';
import { startBroker, type RunningBroker } from '../../src/broker';
import { STANDARD_AUTHORIZER_CLASS } from '../../src/config/definitions';
import { RawClient } from '../helpers/raw-client';
import { rejection } from '../helpers/rejection';

const { ALLOW, DENY } = AclPermissionType;

/** The kafka.authorizer.logger messages among a chunk of the broker's JSON log lines. */
function parseAuthorizerLines(chunk: Buffer): string[] {
  return chunk.toString().split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as { logger?: string; msg: string })
    .filter((l) => l.logger === 'kafka.authorizer.logger').map((l) => l.msg);
}
const AUTHORIZER = { 'authorizer.class.name': STANDARD_AUTHORIZER_CLASS };

function creation(resourceType: RT, resourceName: string, resourcePatternType: PatternType, principal: string, operation: Op,
  permissionType: AclPermissionType, host = '*') {
  return { resourceType, resourceName, resourcePatternType, principal, host, operation, permissionType };
}

const ANY_FILTER = {
  resourceTypeFilter: RT.ANY, resourceNameFilter: null, patternTypeFilter: PatternType.ANY, principalFilter: null, hostFilter: null,
  operation: Op.ANY, permissionType: AclPermissionType.ANY,
};

/** The response's resources as 'TYPE:PATTERN:name principal host OP PERM' lines, sorted. */
function lines(res: DescribeAclsResponse): string[] {
  return res.resources.flatMap((r) => r.acls.map((a) =>
    `${RT[r.resourceType]}:${PatternType[r.patternType!]}:${r.resourceName} ${a.principal} ${a.host} ${Op[a.operation]} ${AclPermissionType[a.permissionType]}`)).sort();
}

async function withClient<T>(b: RunningBroker, f: (c: RawClient) => Promise<T>): Promise<T> {
  const c = await RawClient.connect(b.port);
  try {
    return await f(c);
  } finally {
    c.close();
  }
}

describe('ACL APIs with the StandardAuthorizer', function () {
  this.timeout(30000);
  let dataDir: string;
  let broker: RunningBroker;
  // Test clients connect over PLAINTEXT as User:ANONYMOUS: a super user here, as a Kafka broker's own
  // PLAINTEXT inter-broker connections must be.
  const config = { ...AUTHORIZER, 'super.users': 'User:ANONYMOUS' };

  before(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'fjord-acl-apis-'));
    broker = await startBroker({ dataDir, logLevel: 'silent', config });
  });
  after(async () => {
    await broker?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('CreateAcls stores the valid creations and refuses each invalid one with Kafka\'s INVALID_REQUEST message', async () => {
    const res = await withClient(broker, (c) => c.request<CreateAclsResponse>(ApiKey.CreateAcls, 3, {
      creations: [
        creation(RT.TOPIC, 'foo-1', PatternType.LITERAL, 'User:alice', Op.READ, ALLOW),
        creation(RT.TOPIC, 'foo', PatternType.PREFIXED, 'User:alice', Op.WRITE, ALLOW),
        creation(RT.TOPIC, '*', PatternType.LITERAL, 'User:*', Op.DESCRIBE, ALLOW),
        creation(RT.GROUP, 'g', PatternType.LITERAL, 'User:bob', Op.READ, DENY, '10.0.0.1'),
        creation(RT.TOPIC, 'foo-1', PatternType.LITERAL, 'User:alice', Op.READ, ALLOW), // the first again: one ACL
        creation(RT.CLUSTER, 'my-cluster', PatternType.LITERAL, 'User:alice', Op.ALTER, ALLOW),
        creation(RT.TOPIC, '', PatternType.LITERAL, 'User:alice', Op.READ, ALLOW),
        creation(RT.ANY, 'x', PatternType.LITERAL, 'User:alice', Op.READ, ALLOW),
        creation(RT.TOPIC, 'x', PatternType.MATCH, 'User:alice', Op.READ, ALLOW),
        creation(RT.TOPIC, 'x', PatternType.LITERAL, 'User:alice', Op.ANY, ALLOW),
        creation(RT.TOPIC, 'x', PatternType.LITERAL, 'User:alice', Op.READ, AclPermissionType.ANY),
        creation(RT.TOPIC, 'x', PatternType.LITERAL, 'alice', Op.READ, ALLOW),
        creation(99 as RT, 'x', PatternType.LITERAL, 'User:alice', Op.READ, ALLOW),
      ],
    }));
    const ok = { errorCode: ErrorCode.NONE, errorMessage: null };
    const invalid = (errorMessage: string) => ({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage });
    expect(res.results).to.deep.equal([
      ok, ok, ok, ok, ok,
      invalid('The only valid name for the CLUSTER resource is kafka-cluster'),
      invalid('Invalid empty resource name'),
      invalid('Invalid resourceType ANY'),
      invalid('Invalid patternType MATCH'),
      invalid('Invalid operation ANY'),
      invalid('Invalid permissionType ANY'),
      invalid('Could not parse principal from `alice` (no colon is present separating the principal type from the principal name)'),
      invalid('Invalid resourceType UNKNOWN'),
    ]);
  });

  it('DescribeAcls: ANY lists every ACL, grouped by resource pattern; MATCH the ACLs that apply to a name', async () => {
    await withClient(broker, async (c) => {
      const all = await c.request<DescribeAclsResponse>(ApiKey.DescribeAcls, 3, ANY_FILTER);
      expect(all.errorCode).to.equal(ErrorCode.NONE);
      expect(all.resources.map((r) => `${RT[r.resourceType]}:${PatternType[r.patternType!]}:${r.resourceName}`).sort())
        .to.deep.equal(['GROUP:LITERAL:g', 'TOPIC:LITERAL:*', 'TOPIC:LITERAL:foo-1', 'TOPIC:PREFIXED:foo']);
      expect(lines(all)).to.deep.equal([
        'GROUP:LITERAL:g User:bob 10.0.0.1 READ DENY',
        'TOPIC:LITERAL:* User:* * DESCRIBE ALLOW',
        'TOPIC:LITERAL:foo-1 User:alice * READ ALLOW',
        'TOPIC:PREFIXED:foo User:alice * WRITE ALLOW',
      ]);
      const match = await c.request<DescribeAclsResponse>(ApiKey.DescribeAcls, 3,
        { ...ANY_FILTER, resourceTypeFilter: RT.TOPIC, resourceNameFilter: 'foo-1', patternTypeFilter: PatternType.MATCH });
      expect(lines(match)).to.deep.equal([
        'TOPIC:LITERAL:* User:* * DESCRIBE ALLOW', 'TOPIC:LITERAL:foo-1 User:alice * READ ALLOW', 'TOPIC:PREFIXED:foo User:alice * WRITE ALLOW',
      ]);
      const literalName = await c.request<DescribeAclsResponse>(ApiKey.DescribeAcls, 3,
        { ...ANY_FILTER, resourceNameFilter: 'foo', patternTypeFilter: PatternType.LITERAL });
      expect(lines(literalName)).to.deep.equal([]);
      const anyPatternName = await c.request<DescribeAclsResponse>(ApiKey.DescribeAcls, 3, { ...ANY_FILTER, resourceNameFilter: 'foo' });
      expect(lines(anyPatternName)).to.deep.equal(['TOPIC:PREFIXED:foo User:alice * WRITE ALLOW']);
      const byEntry = await c.request<DescribeAclsResponse>(ApiKey.DescribeAcls, 3,
        { ...ANY_FILTER, principalFilter: 'User:bob', hostFilter: '10.0.0.1', operation: Op.READ, permissionType: DENY });
      expect(lines(byEntry)).to.deep.equal(['GROUP:LITERAL:g User:bob 10.0.0.1 READ DENY']);
      // v0 filters are LITERAL: the prefixed ACL is not among them.
      const v0 = await c.request<DescribeAclsResponse>(ApiKey.DescribeAcls, 0, { ...ANY_FILTER, resourceTypeFilter: RT.TOPIC, patternTypeFilter: undefined });
      expect(lines(v0)).to.deep.equal(['TOPIC:LITERAL:* User:* * DESCRIBE ALLOW', 'TOPIC:LITERAL:foo-1 User:alice * READ ALLOW']);
      const unknown = await c.request<DescribeAclsResponse>(ApiKey.DescribeAcls, 3, { ...ANY_FILTER, operation: 0 });
      expect([unknown.errorCode, unknown.errorMessage]).to.deep.equal([ErrorCode.INVALID_REQUEST, 'Unknown entryFilter.']);
    });
  });

  it('keeps the ACLs across a restart, and deletes what each filter matches, answered per filter', async () => {
    await broker.close();
    broker = await startBroker({ dataDir, logLevel: 'silent', config });
    await withClient(broker, async (c) => {
      expect(lines(await c.request<DescribeAclsResponse>(ApiKey.DescribeAcls, 3, ANY_FILTER))).to.have.length(4);
      const res = await c.request<DeleteAclsResponse>(ApiKey.DeleteAcls, 3, {
        filters: [
          { ...ANY_FILTER, resourceTypeFilter: RT.TOPIC, resourceNameFilter: 'foo-1', patternTypeFilter: PatternType.MATCH, principalFilter: 'User:alice' },
          { ...ANY_FILTER, principalFilter: 'User:alice', operation: Op.READ },
          { ...ANY_FILTER, patternTypeFilter: 0 },
          { ...ANY_FILTER, principalFilter: 'User:nobody' },
        ],
      });
      const matching = (resourceType: RT, resourceName: string, patternType: PatternType, operation: Op) => ({
        errorCode: 0, errorMessage: null, resourceType, resourceName, patternType, principal: 'User:alice', host: '*', operation, permissionType: ALLOW,
      });
      const ok = (matchingAcls: unknown[]) => ({ errorCode: ErrorCode.NONE, errorMessage: null, matchingAcls });
      expect(res.filterResults[0].matchingAcls).to.have.deep.members([
        matching(RT.TOPIC, 'foo-1', PatternType.LITERAL, Op.READ), matching(RT.TOPIC, 'foo', PatternType.PREFIXED, Op.WRITE),
      ]);
      expect(res.filterResults.slice(1)).to.deep.equal([
        ok([matching(RT.TOPIC, 'foo-1', PatternType.LITERAL, Op.READ)]),
        { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Unknown patternFilter.', matchingAcls: [] },
        ok([]),
      ]);
      expect(lines(await c.request<DescribeAclsResponse>(ApiKey.DescribeAcls, 3, ANY_FILTER)))
        .to.deep.equal(['GROUP:LITERAL:g User:bob 10.0.0.1 READ DENY', 'TOPIC:LITERAL:* User:* * DESCRIBE ALLOW']);
    });
    await broker.close();
    broker = await startBroker({ dataDir, logLevel: 'silent', config });
    expect(lines(await withClient(broker, (c) => c.request<DescribeAclsResponse>(ApiKey.DescribeAcls, 3, ANY_FILTER)))).to.have.length(2);
  });
});

describe('ACLs applied at once, and the ACL APIs\' own authorization', function () {
  this.timeout(30000);
  let broker: RunningBroker;
  const authorizerLines: string[] = [];
  // No super user: the ANONYMOUS test client is allowed what no ACL guards, until an ACL does.
  before(async () => {
    const sink = new Writable({ write(chunk: Buffer, _enc, done) { authorizerLines.push(...parseAuthorizerLines(chunk)); done(); } });
    broker = await startBroker({ logger: pino({ level: 'info' }, sink), config: { ...AUTHORIZER, 'allow.everyone.if.no.acl.found': 'true' } });
    await broker.broker.controller.createTopic({ name: 't', numPartitions: 1, replicationFactor: -1, assignments: [], configs: {} }, false);
  });
  after(() => broker?.close());

  const bit = (...ops: Op[]) => ops.reduce((acc, op) => acc | (1 << op), 0);

  it('authorized operations follow the ACLs as they are created; the ACL APIs then need ALTER / DESCRIBE on the cluster', async () => {
    await withClient(broker, async (c) => {
      const metadata = () => c.request<MetadataResponse>(ApiKey.Metadata, 10,
        { topics: [{ name: 't', topicId: undefined }], allowAutoTopicCreation: false, includeClusterAuthorizedOperations: true, includeTopicAuthorizedOperations: true });
      let md = await metadata();
      expect(md.topics[0].topicAuthorizedOperations).to.equal(bit(Op.READ, Op.WRITE, Op.CREATE, Op.DESCRIBE, Op.DELETE, Op.ALTER, Op.DESCRIBE_CONFIGS, Op.ALTER_CONFIGS));
      const created = await c.request<CreateAclsResponse>(ApiKey.CreateAcls, 3, {
        creations: [
          creation(RT.TOPIC, 't', PatternType.LITERAL, 'User:ANONYMOUS', Op.READ, ALLOW),
          creation(RT.CLUSTER, 'kafka-cluster', PatternType.LITERAL, 'User:ANONYMOUS', Op.ALTER, DENY),
        ],
      });
      expect(created.results.map((r) => r.errorCode)).to.deep.equal([0, 0]);
      md = await metadata();
      expect(md.topics[0].topicAuthorizedOperations).to.equal(bit(Op.READ, Op.DESCRIBE));
      // The cluster now has an ACL (for ALTER): every other operation on it falls to the default deny.
      expect(md.clusterAuthorizedOperations).to.equal(0);
      const described = await c.request<DescribeClusterResponse>(ApiKey.DescribeCluster, 0, { includeClusterAuthorizedOperations: true });
      expect(described.clusterAuthorizedOperations).to.equal(0);

      const again = await c.request<CreateAclsResponse>(ApiKey.CreateAcls, 3, { creations: [creation(RT.TOPIC, 'u', PatternType.LITERAL, 'User:x', Op.READ, ALLOW)] });
      expect(again.results).to.deep.equal([{ errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: 'Cluster authorization failed.' }]);
      const deleted = await c.request<DeleteAclsResponse>(ApiKey.DeleteAcls, 3, { filters: [ANY_FILTER, ANY_FILTER] });
      expect(deleted.filterResults.map((r) => [r.errorCode, r.matchingAcls.length])).to.deep.equal([[31, 0], [31, 0]]);
      const listed = await c.request<DescribeAclsResponse>(ApiKey.DescribeAcls, 3, ANY_FILTER);
      expect([listed.errorCode, listed.resources]).to.deep.equal([ErrorCode.CLUSTER_AUTHORIZATION_FAILED, []]);
      expect(broker.broker.controller.acls()).to.have.length(2);
      // The denials, as kafka.authorizer.logger words them, naming the request.
      expect(authorizerLines).to.include('Principal = User:ANONYMOUS is Denied operation = ALTER from host = 127.0.0.1 on resource = '
        + 'Cluster:LITERAL:kafka-cluster for request = CreateAcls with resourceRefCount = 1 based on rule MatchingAcl(acl=StandardAcl('
        + 'resourceType=CLUSTER, resourceName=kafka-cluster, patternType=LITERAL, principal=User:ANONYMOUS, host=*, operation=ALTER, permissionType=DENY))');
      expect(authorizerLines).to.include('Principal = User:ANONYMOUS is Denied operation = DESCRIBE from host = 127.0.0.1 on resource = '
        + 'Cluster:LITERAL:kafka-cluster for request = DescribeAcls with resourceRefCount = 1 based on rule DefaultDeny');
      // Authorized operations are computed quietly: no line for Metadata's checks.
      expect(authorizerLines.filter((l) => l.includes('for request = Metadata'))).to.deep.equal([]);
    });
  });

  it('refuses an authorizer.class.name other than the StandardAuthorizer', async () => {
    const err = await rejection(startBroker({ logLevel: 'silent', config: { 'authorizer.class.name': 'kafka.security.authorizer.AclAuthorizer' } }));
    expect(err.message).to.equal('Invalid value kafka.security.authorizer.AclAuthorizer for configuration authorizer.class.name: '
      + `Fjord's authorizer is ${STANDARD_AUTHORIZER_CLASS} (empty: no authorizer); no other class can be loaded`);
  });
});

describe('ACLs through kafkajs\'s admin client', function () {
  this.timeout(30000);
  let broker: RunningBroker;
  before(async () => {
    broker = await startBroker({ logLevel: 'silent', config: { ...AUTHORIZER, 'super.users': 'User:ANONYMOUS' } });
  });
  after(() => broker?.close());

  it('creates, describes (with a MATCH filter) and deletes ACLs', async () => {
    const admin = new Kafka({ brokers: [broker.bootstrap], clientId: 'acl-test', logLevel: logLevel.NOTHING, retry: { retries: 0 } }).admin();
    await admin.connect();
    try {
      const entry = {
        resourceType: AclResourceTypes.TOPIC, resourceName: 'pay', resourcePatternType: ResourcePatternTypes.PREFIXED,
        principal: 'User:alice', host: '*', operation: AclOperationTypes.WRITE, permissionType: AclPermissionTypes.ALLOW,
      };
      await admin.createAcls({ acl: [entry, { ...entry, resourceType: AclResourceTypes.GROUP, resourceName: 'g', resourcePatternType: ResourcePatternTypes.LITERAL, operation: AclOperationTypes.READ }] });
      const described = await admin.describeAcls({
        resourceType: AclResourceTypes.TOPIC, resourceName: 'payments', resourcePatternType: ResourcePatternTypes.MATCH,
        operation: AclOperationTypes.ANY, permissionType: AclPermissionTypes.ANY,
      });
      expect(described.resources).to.deep.equal([{
        resourceType: AclResourceTypes.TOPIC, resourceName: 'pay', resourcePatternType: ResourcePatternTypes.PREFIXED,
        acls: [{ principal: 'User:alice', host: '*', operation: AclOperationTypes.WRITE, permissionType: AclPermissionTypes.ALLOW }],
      }]);
      const deleted = await admin.deleteAcls({ filters: [{ resourceType: AclResourceTypes.ANY, resourcePatternType: ResourcePatternTypes.ANY,
        principal: 'User:alice', operation: AclOperationTypes.ANY, permissionType: AclPermissionTypes.ANY }] });
      expect(deleted.filterResponses[0].matchingAcls.map((a) => a.resourceName).sort()).to.deep.equal(['g', 'pay']);
      expect(broker.broker.controller.acls()).to.deep.equal([]);
    } finally {
      await admin.disconnect();
    }
  });
});
