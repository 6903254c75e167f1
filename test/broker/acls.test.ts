// The ACL APIs without an authorizer: SECURITY_DISABLED with Kafka's message, at the level each API
// carries it (DescribeAcls at the top, CreateAcls per creation, DeleteAcls per filter), on the wire
// and as kafkajs's admin client sees it.
import { expect } from 'chai';
import { Kafka, logLevel, AclResourceTypes, AclOperationTypes, AclPermissionTypes, ResourcePatternTypes } from 'kafkajs';
import { ApiKey } from '../../src/protocol/generated';
import type { DescribeAclsResponse } from '../../src/protocol/generated/DescribeAclsResponse';
import type { CreateAclsResponse } from '../../src/protocol/generated/CreateAclsResponse';
import type { DeleteAclsResponse } from '../../src/protocol/generated/DeleteAclsResponse';
import { ErrorCode } from '../../src/common/errors';
import { RawClient } from '../helpers/raw-client';
import { rejection } from '../helpers/rejection';
import { withBroker } from '../helpers/broker';

// Kafka 4.4.0's words: DescribeAcls has its own.
const NO_AUTHORIZER = 'No Authorizer is configured.';
const NO_AUTHORIZER_DESCRIBE = 'No Authorizer is configured on the broker';
const TOPIC = 2;
const LITERAL = 3;
const READ = 3;
const ALLOW = 3;

describe('ACL APIs without an authorizer', function () {
  this.timeout(30000);
  const broker = withBroker();

  const acl = { resourceType: TOPIC, resourceName: 't', resourcePatternType: LITERAL, principal: 'User:alice', host: '*', operation: READ, permissionType: ALLOW };
  const filter = { resourceTypeFilter: TOPIC, resourceNameFilter: null, patternTypeFilter: LITERAL, principalFilter: null, hostFilter: null, operation: READ, permissionType: ALLOW };

  for (const version of [0, 1, 3]) {
    it(`answers SECURITY_DISABLED at v${version}: DescribeAcls at the top, CreateAcls per creation, DeleteAcls per filter`, async () => {
      const c = await RawClient.connect(broker.current().port);
      try {
        const described = await c.request<DescribeAclsResponse>(ApiKey.DescribeAcls, version, filter);
        expect([described.errorCode, described.errorMessage, described.resources]).to.deep.equal([ErrorCode.SECURITY_DISABLED, NO_AUTHORIZER_DESCRIBE, []]);
        const created = await c.request<CreateAclsResponse>(ApiKey.CreateAcls, version, { creations: [acl, { ...acl, principal: 'User:bob' }] });
        expect(created.results).to.deep.equal([
          { errorCode: ErrorCode.SECURITY_DISABLED, errorMessage: NO_AUTHORIZER }, { errorCode: ErrorCode.SECURITY_DISABLED, errorMessage: NO_AUTHORIZER },
        ]);
        const deleted = await c.request<DeleteAclsResponse>(ApiKey.DeleteAcls, version, { filters: [filter] });
        expect(deleted.filterResults).to.deep.equal([{ errorCode: ErrorCode.SECURITY_DISABLED, errorMessage: NO_AUTHORIZER, matchingAcls: [] }]);
        const none = await c.request<CreateAclsResponse>(ApiKey.CreateAcls, version, { creations: [] });
        expect(none.results).to.deep.equal([]);
      } finally {
        c.close();
      }
    });
  }

  it('kafkajs\'s admin client gets SECURITY_DISABLED for each', async () => {
    const admin = new Kafka({ brokers: [`127.0.0.1:${broker.current().port}`], clientId: 'acl-test', logLevel: logLevel.NOTHING, retry: { retries: 0 } }).admin();
    await admin.connect();
    try {
      const entry = {
        resourceType: AclResourceTypes.TOPIC, resourceName: 't', resourcePatternType: ResourcePatternTypes.LITERAL,
        principal: 'User:alice', host: '*', operation: AclOperationTypes.READ, permissionType: AclPermissionTypes.ALLOW,
      };
      const failures = [
        await rejection(admin.describeAcls({ resourceType: AclResourceTypes.TOPIC, resourcePatternType: ResourcePatternTypes.LITERAL, operation: AclOperationTypes.ANY, permissionType: AclPermissionTypes.ANY })),
        await rejection(admin.createAcls({ acl: [entry] })),
        await rejection(admin.deleteAcls({ filters: [entry] })),
      ];
      for (const err of failures) expect((err as Error & { type?: string }).type, String(err)).to.equal('SECURITY_DISABLED');
    } finally {
      await admin.disconnect();
    }
  });
});
