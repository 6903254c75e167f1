import { expect } from 'chai';
import { STANDARD_AUTHORIZER_CLASS } from '../../src/config/definitions';
import { withBroker } from '../helpers/broker';
import { runFjord, tableRows } from '../helpers/fjord-cli';

describe('fjord acls', function () {
  // Each run of bin/fjord loads @platformatic/kafka (about a second of CPU, more on a busy machine).
  this.timeout(180000);
  // The CLI connects as ANONYMOUS (PLAINTEXT), a super user here so that it may manage ACLs.
  const secured = withBroker({ config: { 'authorizer.class.name': STANDARD_AUTHORIZER_CLASS, 'super.users': 'User:ANONYMOUS' } });
  const open = withBroker();
  const fjord = (...args: string[]) => runFjord(...args, '--bootstrap-server', `127.0.0.1:${secured.current().port}`);

  it('creates ACLs as kafka-acls combines its flags, lists them and deletes them', async () => {
    const created = await fjord('acls', 'create', '--allow-principal', 'User:alice', '--operation', 'Read', '--operation', 'Describe', '--topic', 'orders', '--group', 'billing');
    expect(created.stderr).to.equal('');
    expect(created.stdout.split('\n')[0]).to.equal('Added 4 ACLs:');
    const prefixed = await fjord('acls', 'create', '--deny-principal', 'User:mallory', '--operation', 'Write', '--topic', 'ord', '--resource-pattern-type', 'prefixed', '--json');
    expect(JSON.parse(prefixed.stdout)).to.deep.equal([
      { resourceType: 'TOPIC', resourceName: 'ord', patternType: 'PREFIXED', principal: 'User:mallory', host: '*', operation: 'WRITE', permissionType: 'DENY' },
    ]);

    const list = await fjord('acls', 'list', '--topic', 'orders');
    expect(list.status).to.equal(0);
    const rows = tableRows(list.stdout);
    expect(rows[0]).to.deep.equal(['PRINCIPAL', 'HOST', 'OPERATION', 'PERMISSION', 'RESOURCE', 'PATTERN']);
    expect(rows.slice(1).sort()).to.deep.equal([
      ['User:alice', '*', 'Describe', 'Allow', 'TOPIC:orders', 'LITERAL'],
      ['User:alice', '*', 'Read', 'Allow', 'TOPIC:orders', 'LITERAL'],
    ]);
    // MATCH: every ACL that applies to the topic 'orders', the prefixed one included.
    const matching = JSON.parse((await fjord('acls', 'list', '--topic', 'orders', '--resource-pattern-type', 'match', '--json')).stdout);
    expect(matching.map((b: { principal: string; operation: string }) => `${b.principal}:${b.operation}`).sort()).to.deep.equal(['User:alice:DESCRIBE', 'User:alice:READ', 'User:mallory:WRITE']);

    const deleted = await fjord('acls', 'delete', '--allow-principal', 'User:alice', '--operation', 'Read', '--topic', 'orders', '--json');
    expect(JSON.parse(deleted.stdout)).to.deep.equal([
      { resourceType: 'TOPIC', resourceName: 'orders', patternType: 'LITERAL', principal: 'User:alice', host: '*', operation: 'READ', permissionType: 'ALLOW' },
    ]);
    const left = JSON.parse((await fjord('acls', 'list', '--principal', 'User:alice', '--json')).stdout);
    expect(left.map((b: { resourceType: string; operation: string }) => `${b.resourceType}:${b.operation}`).sort()).to.deep.equal(['GROUP:DESCRIBE', 'GROUP:READ', 'TOPIC:DESCRIBE']);
  });

  it('refuses incomplete or unknown flags before asking the broker', async () => {
    const noOperation = await fjord('acls', 'create', '--allow-principal', 'User:alice', '--topic', 'orders');
    expect(noOperation.status).to.equal(1);
    expect(noOperation.stderr).to.equal('fjord: give at least one --operation\n');
    const unknown = await fjord('acls', 'create', '--allow-principal', 'User:alice', '--topic', 'orders', '--operation', 'Fly');
    expect(unknown.status).to.equal(1);
    expect(unknown.stderr).to.match(/^fjord: unknown operation 'Fly': one of All, Read, Write, .*DescribeConfigs/);
  });

  it('reports SECURITY_DISABLED in one line when the broker has no authorizer', async () => {
    const out = await runFjord('acls', 'list', '--bootstrap-server', `127.0.0.1:${open.current().port}`);
    expect(out.status).to.equal(1);
    expect(out.stdout).to.equal('');
    expect(out.stderr).to.match(/^fjord: SECURITY_DISABLED: [^\n]+\n$/);
  });
});
