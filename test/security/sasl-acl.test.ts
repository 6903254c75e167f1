// The SASL principal is the one the authorizer judges: on a SASL_PLAINTEXT listener with Fjord's
// StandardAuthorizer, the super user (authenticated with PLAIN) creates ACLs through kafkajs; DescribeAcls
// (DESCRIBE on the cluster) then works for the user they allow and is CLUSTER_AUTHORIZATION_FAILED for
// an authenticated user without them.
import { expect } from 'chai';
import {
  Kafka, logLevel, AclResourceTypes, AclOperationTypes, AclPermissionTypes, ResourcePatternTypes, type SASLOptions, type Admin,
} from 'kafkajs';
import { withBroker } from '../helpers/broker';

const ANY_ACL = {
  resourceType: AclResourceTypes.ANY, resourcePatternType: ResourcePatternTypes.ANY,
  operation: AclOperationTypes.ANY, permissionType: AclPermissionTypes.ANY,
};

describe('SASL principals under the StandardAuthorizer', function () {
  this.timeout(30_000);
  const broker = withBroker({
    config: {
      listeners: 'SASL_PLAINTEXT://127.0.0.1:0',
      'sasl.enabled.mechanisms': 'PLAIN',
      'listener.name.sasl_plaintext.plain.sasl.jaas.config': 'org.apache.kafka.common.security.plain.PlainLoginModule required ' +
        'user_admin="admin-secret" user_alice="alice-secret" user_mallory="mallory-secret";',
      'authorizer.class.name': 'org.apache.kafka.metadata.authorizer.StandardAuthorizer',
      'super.users': 'User:admin',
    },
  });
  const admin = (username: string): Admin => new Kafka({
    clientId: 'sasl-acl', brokers: [broker.current().bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 0 },
    sasl: { mechanism: 'plain', username, password: `${username}-secret` } as SASLOptions,
  }).admin();

  async function describeAclsAs(username: string): Promise<string> {
    const a = admin(username);
    await a.connect();
    try {
      const r = await a.describeAcls(ANY_ACL);
      return `${r.resources.length} resources`;
    } catch (e) {
      return (e as { type?: string }).type ?? String(e);
    } finally {
      await a.disconnect();
    }
  }

  it('the super user creates ACLs; alice may describe them, mallory may not', async () => {
    const root = admin('admin');
    await root.connect();
    await root.createAcls({
      acl: [{
        resourceType: AclResourceTypes.CLUSTER, resourceName: 'kafka-cluster', resourcePatternType: ResourcePatternTypes.LITERAL,
        principal: 'User:alice', host: '*', operation: AclOperationTypes.DESCRIBE, permissionType: AclPermissionTypes.ALLOW,
      }],
    });
    await root.disconnect();
    expect(await describeAclsAs('alice')).to.equal('1 resources');
    expect(await describeAclsAs('mallory')).to.equal('CLUSTER_AUTHORIZATION_FAILED');
  });
});
