// End to end through real ACLs: a broker configured with Kafka's StandardAuthorizer keys, ACLs
// created with CreateAcls, and the handlers' checks refusing what the ACLs deny (the principal is
// User:ANONYMOUS on PLAINTEXT).
import { expect } from 'chai';
import { ApiKey } from '../../src/protocol/generated';
import { ErrorCode } from '../../src/common/errors';
import { AclOperation, AclPermissionType, PatternType, ResourceType } from '../../src/security/acl';
import { RawClient } from '../helpers/raw-client';
import { withBroker } from '../helpers/broker';

describe('authorization through the StandardAuthorizer and CreateAcls', function () {
  const broker = withBroker({
    config: {
      'authorizer.class.name': 'org.apache.kafka.metadata.authorizer.StandardAuthorizer',
      'allow.everyone.if.no.acl.found': 'true',
    },
  });
  let raw: RawClient;

  before(async () => {
    raw = await RawClient.connect(broker.current().port);
    for (const name of ['guarded', 'hidden']) {
      await broker.current().broker.controller.createTopic({ name, numPartitions: 1, replicationFactor: 1, assignments: [], configs: {} }, false);
    }
    const acl = (permissionType: AclPermissionType, operation: AclOperation, resourceName: string) => ({
      resourceType: ResourceType.TOPIC, resourceName, resourcePatternType: PatternType.LITERAL, principal: 'User:ANONYMOUS', host: '*',
      operation, permissionType,
    });
    // A topic with ACLs is no longer covered by allow.everyone.if.no.acl.found: ALL is allowed, one operation denied.
    const { ALLOW, DENY } = AclPermissionType;
    const created = await raw.api(ApiKey.CreateAcls, 3, { creations: [
      acl(ALLOW, AclOperation.ALL, 'guarded'), acl(DENY, AclOperation.READ, 'guarded'),
      acl(ALLOW, AclOperation.ALL, 'hidden'), acl(DENY, AclOperation.DESCRIBE, 'hidden'),
    ] });
    expect(created.results.map((r) => r.errorCode)).to.deep.equal([ErrorCode.NONE, ErrorCode.NONE, ErrorCode.NONE, ErrorCode.NONE]);
  });
  after(() => raw.close());

  it('a DENY of READ refuses Fetch with TOPIC_AUTHORIZATION_FAILED; the topic stays described (ListOffsets)', async () => {
    const fetched = await raw.api(ApiKey.Fetch, 12, {
      replicaId: -1, maxWaitMs: 0, minBytes: 0, maxBytes: 1 << 20, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
      topics: [{ topic: 'guarded', partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: 0n, logStartOffset: -1n, partitionMaxBytes: 1 << 20 }] }],
      forgottenTopicsData: [], rackId: '',
    });
    expect(fetched.responses[0].partitions[0].errorCode).to.equal(ErrorCode.TOPIC_AUTHORIZATION_FAILED);
    const listed = await raw.api(ApiKey.ListOffsets, 7, {
      replicaId: -1, isolationLevel: 0, topics: [{ name: 'guarded', partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1n }] }],
    });
    expect(listed.topics[0].partitions[0].errorCode).to.equal(ErrorCode.NONE);
  });

  it('a DENY of DESCRIBE hides the topic from Metadata and refuses it by name', async () => {
    const all = await raw.api(ApiKey.Metadata, 12, { topics: null, includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false });
    expect(all.topics.map((t) => t.name)).to.include('guarded').and.not.include('hidden');
    const named = await raw.api(ApiKey.Metadata, 12, {
      topics: [{ name: 'hidden' }], allowAutoTopicCreation: false, includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false,
    });
    expect(named.topics[0].errorCode).to.equal(ErrorCode.TOPIC_AUTHORIZATION_FAILED);
  });
});
