// ACLs for authenticated principals, end to end: a broker with a PLAINTEXT listener (its ANONYMOUS
// clients the super user, the administrator here) and an SSL listener requiring client certificates
// (the principal from the certificate, ssl.principal.mapping.rules). What alice may do follows the ACLs
// the administrator creates and deletes, at once: the ACL APIs' CLUSTER checks, hosts, and the
// authorized operations Metadata and DescribeCluster answer her (the cluster's only with DESCRIBE on it).
import { expect } from 'chai';
import { startBroker, type RunningBroker } from '../../src/broker';
import { ApiKey } from '../../src/protocol/generated';
import type { CreateAclsResponse } from '../../src/protocol/generated/CreateAclsResponse';
import type { DeleteAclsResponse } from '../../src/protocol/generated/DeleteAclsResponse';
import type { DescribeAclsResponse } from '../../src/protocol/generated/DescribeAclsResponse';
import type { MetadataResponse } from '../../src/protocol/generated/MetadataResponse';
import type { DescribeClusterResponse } from '../../src/protocol/generated/DescribeClusterResponse';
import { ErrorCode } from '../../src/common/errors';
import { STANDARD_AUTHORIZER_CLASS } from '../../src/config/definitions';
import { AclOperation as Op, AclPermissionType, PatternType, ResourceType as RT } from '../../src/security/acl';
import { makeCertificates, type Certificates, type KeyPair } from '../helpers/certs';
import { RawClient } from '../helpers/raw-client';

const { ALLOW } = AclPermissionType;
const ANY_FILTER = {
  resourceTypeFilter: RT.ANY, resourceNameFilter: null, patternTypeFilter: PatternType.ANY, principalFilter: null, hostFilter: null,
  operation: Op.ANY, permissionType: AclPermissionType.ANY,
};
const bits = (...ops: Op[]) => ops.reduce((acc, op) => acc | (1 << op), 0);

describe('ACLs for a principal authenticated by its certificate', function () {
  this.timeout(30_000);
  let certs: Certificates;
  let aliceCert: KeyPair;
  let running: RunningBroker;
  let admin: RawClient;
  let alice: RawClient;

  before(async () => {
    certs = makeCertificates();
    aliceCert = certs.client('/O=acme/CN=alice');
    running = await startBroker({
      logLevel: 'silent',
      config: {
        listeners: 'PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0',
        ...certs.brokerSsl,
        'ssl.client.auth': 'required', 'ssl.principal.mapping.rules': 'RULE:^CN=([^,]*),.*$/$1/,DEFAULT',
        'authorizer.class.name': STANDARD_AUTHORIZER_CLASS, 'super.users': 'User:ANONYMOUS',
      },
    });
    await running.broker.controller.createTopic({ name: 'trades', numPartitions: 1, replicationFactor: -1, assignments: [], configs: {} }, false);
    admin = await RawClient.connect(running.listeners.get('PLAINTEXT')!.port);
    alice = await RawClient.connectTls(running.listeners.get('SSL')!.port,
      { ca: certs.ca.cert, servername: 'localhost', cert: aliceCert.cert, key: aliceCert.key });
  });
  after(async () => {
    admin?.close();
    alice?.close();
    await running?.close();
    certs?.remove();
  });

  const grant = async (resourceType: RT, resourceName: string, patternType: PatternType, operation: Op, host = '*') => {
    const res = await admin.request<CreateAclsResponse>(ApiKey.CreateAcls, 3, {
      creations: [{ resourceType, resourceName, resourcePatternType: patternType, principal: 'User:alice', host, operation, permissionType: ALLOW }],
    });
    expect(res.results[0].errorCode).to.equal(ErrorCode.NONE);
  };
  const clusterOps = async () => (await alice.request<DescribeClusterResponse>(ApiKey.DescribeCluster, 1,
    { includeClusterAuthorizedOperations: true, endpointType: 1 })).clusterAuthorizedOperations;
  const topicOps = async () => (await alice.request<MetadataResponse>(ApiKey.Metadata, 12, {
    topics: [{ name: 'trades', topicId: undefined }], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: true,
  })).topics[0].topicAuthorizedOperations;

  it('alice may list the ACLs once allowed DESCRIBE on the cluster (from her host), not before', async () => {
    expect(running.listeners.get('SSL')!.listener.sessions().map((s) => `${s.principal.principalType}:${s.principal.name}`)).to.deep.equal(['User:alice']);
    let listed = await alice.request<DescribeAclsResponse>(ApiKey.DescribeAcls, 3, ANY_FILTER);
    expect(listed.errorCode).to.equal(ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
    // CREATE on the cluster, but not DESCRIBE: Kafka answers no cluster operations at all.
    await grant(RT.CLUSTER, 'kafka-cluster', PatternType.LITERAL, Op.CREATE);
    expect(await clusterOps()).to.equal(0);
    // An ACL for another host does not help.
    await grant(RT.CLUSTER, 'kafka-cluster', PatternType.LITERAL, Op.DESCRIBE, '10.1.2.3');
    listed = await alice.request<DescribeAclsResponse>(ApiKey.DescribeAcls, 3, ANY_FILTER);
    expect(listed.errorCode).to.equal(ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
    await grant(RT.CLUSTER, 'kafka-cluster', PatternType.LITERAL, Op.DESCRIBE, '127.0.0.1');
    listed = await alice.request<DescribeAclsResponse>(ApiKey.DescribeAcls, 3, ANY_FILTER);
    expect(listed.errorCode).to.equal(ErrorCode.NONE);
    expect(listed.resources.flatMap((r) => r.acls.map((a) => `${Op[a.operation]} ${a.host}`)).sort())
      .to.deep.equal(['CREATE *', 'DESCRIBE 10.1.2.3', 'DESCRIBE 127.0.0.1']);
    expect(await clusterOps()).to.equal(bits(Op.CREATE, Op.DESCRIBE));
    // DESCRIBE does not give ALTER: she may not create ACLs.
    const created = await alice.request<CreateAclsResponse>(ApiKey.CreateAcls, 3, {
      creations: [{ resourceType: RT.TOPIC, resourceName: 'x', resourcePatternType: PatternType.LITERAL, principal: 'User:alice', host: '*', operation: Op.ALL, permissionType: ALLOW }],
    });
    expect(created.results[0].errorCode).to.equal(ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
  });

  it('her authorized operations on a topic follow the ACLs as they are created and deleted', async () => {
    await grant(RT.TOPIC, 'tra', PatternType.PREFIXED, Op.WRITE);
    expect(await topicOps()).to.equal(bits(Op.WRITE, Op.DESCRIBE));
    await grant(RT.TOPIC, '*', PatternType.LITERAL, Op.ALTER_CONFIGS);
    expect(await topicOps()).to.equal(bits(Op.WRITE, Op.DESCRIBE, Op.DESCRIBE_CONFIGS, Op.ALTER_CONFIGS));
    const deleted = await admin.request<DeleteAclsResponse>(ApiKey.DeleteAcls, 3,
      { filters: [{ ...ANY_FILTER, resourceTypeFilter: RT.TOPIC, operation: Op.ALTER_CONFIGS }] });
    expect(deleted.filterResults[0].matchingAcls.map((a) => a.resourceName)).to.deep.equal(['*']);
    expect(await topicOps()).to.equal(bits(Op.WRITE, Op.DESCRIBE));
  });
});
