// ACLs in a cluster of two brokers on etcd: an ACL created through one broker is in etcd
// (/acls/<binding>) and enforced by the other's authorizer as its cache follows the watch; a delete
// through the other broker is seen by the first; a restarted broker finds them again.
import { expect } from 'chai';
import { ApiKey } from '../../src/protocol/generated';
import type { CreateAclsResponse } from '../../src/protocol/generated/CreateAclsResponse';
import type { DeleteAclsResponse } from '../../src/protocol/generated/DeleteAclsResponse';
import type { DescribeAclsResponse } from '../../src/protocol/generated/DescribeAclsResponse';
import { STANDARD_AUTHORIZER_CLASS } from '../../src/config/definitions';
import { AclOperation as Op, AclPermissionType, PatternType, ResourceType as RT } from '../../src/security/acl';
import type { Session } from '../../src/security/principal';
import { withEtcdBrokers } from '../helpers/etcd-brokers';
import { eventually } from '../helpers/eventually';

const alice: Session = { principal: { principalType: 'User', name: 'alice' }, clientAddress: '10.0.0.1', listenerName: 'PLAINTEXT', securityProtocol: 'PLAINTEXT' };

describe('ACLs in a cluster', function () {
  this.timeout(60_000);
  const cluster = withEtcdBrokers([1, 2], {
    // The test client, and the brokers' own PLAINTEXT connections, are User:ANONYMOUS.
    'authorizer.class.name': STANDARD_AUTHORIZER_CLASS, 'super.users': 'User:ANONYMOUS',
  });
  const aliceMayRead = (nodeId: number) => cluster.broker(nodeId).broker.authorizer.authorize(alice, Op.READ, RT.TOPIC, 'orders-eu');
  const anyFilter = {
    resourceTypeFilter: RT.ANY, resourceNameFilter: null, patternTypeFilter: PatternType.ANY, principalFilter: null, hostFilter: null,
    operation: Op.ANY, permissionType: AclPermissionType.ANY,
  };

  it('enforces on broker 2 an ACL created through broker 1, and on broker 1 a delete made through broker 2', async () => {
    expect(aliceMayRead(1)).to.equal(false);
    expect(aliceMayRead(2)).to.equal(false);
    const readOrders = { resourceType: RT.TOPIC, resourceName: 'orders', resourcePatternType: PatternType.PREFIXED, principal: 'User:alice', host: '*', operation: Op.READ, permissionType: AclPermissionType.ALLOW };
    // The same ACL twice in one request is one ACL.
    const created = await cluster.request<CreateAclsResponse>(1, ApiKey.CreateAcls, 3, { creations: [readOrders, readOrders] });
    expect(created.results).to.deep.equal([{ errorCode: 0, errorMessage: null }, { errorCode: 0, errorMessage: null }]);
    // Broker 1 answered once its own cache had the ACL.
    expect(aliceMayRead(1)).to.equal(true);
    await eventually(() => aliceMayRead(2), 'broker 2 allowing alice', 10_000);
    const onTwo = await cluster.request<DescribeAclsResponse>(2, ApiKey.DescribeAcls, 3, anyFilter);
    expect(onTwo.resources.map((r) => [r.resourceName, r.patternType, r.acls.map((a) => a.principal)])).to.deep.equal([['orders', PatternType.PREFIXED, ['User:alice']]]);

    const deleted = await cluster.request<DeleteAclsResponse>(2, ApiKey.DeleteAcls, 3, { filters: [{ ...anyFilter, principalFilter: 'User:alice' }] });
    expect(deleted.filterResults[0].matchingAcls.map((a) => a.resourceName)).to.deep.equal(['orders']);
    expect(aliceMayRead(2)).to.equal(false);
    await eventually(() => !aliceMayRead(1), 'broker 1 no longer allowing alice', 10_000);
  });

  it('a restarted broker finds the ACLs in etcd', async () => {
    const created = await cluster.request<CreateAclsResponse>(2, ApiKey.CreateAcls, 3, {
      creations: [{ resourceType: RT.TOPIC, resourceName: 'orders-eu', resourcePatternType: PatternType.LITERAL, principal: 'User:*', host: '*', operation: Op.ALL, permissionType: AclPermissionType.ALLOW }],
    });
    expect(created.results[0].errorCode).to.equal(0);
    await cluster.restart(1);
    expect(aliceMayRead(1)).to.equal(true);
    expect(cluster.broker(1).broker.controller.acls()).to.have.length(1);
  });
});
