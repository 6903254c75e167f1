// The StandardAuthorizer's decision table against Kafka's documented semantics (StandardAuthorizerData,
// Authorizer.authorizeByResourceType / KIP-679): every resource type and each of its operations,
// allow and deny, LITERAL, PREFIXED and the '*' wildcard, wildcard principal and host, DENY over
// ALLOW, the implied operations, super users, allow.everyone.if.no.acl.found, and the log lines.
import { expect } from 'chai';
import { Writable } from 'node:stream';
import pino from 'pino';
import { AclOperation as Op, AclPermissionType, PatternType, ResourceType as RT } from '../../src/security/acl';
import { SUPPORTED_OPERATIONS, type AclBinding } from '../../src/security/acl-binding';
import { StandardAuthorizer, parseSuperUsers } from '../../src/security/standard-authorizer';
import type { Session } from '../../src/security/principal';

const { ALLOW, DENY } = AclPermissionType;
const { LITERAL, PREFIXED } = PatternType;

function acl(resourceType: RT, resourceName: string, patternType: PatternType, principal: string, operation: Op,
  permissionType: AclPermissionType, host = '*'): AclBinding {
  return { resourceType, resourceName, patternType, principal, host, operation, permissionType };
}

function session(name: string, clientAddress = '10.0.0.1'): Session {
  return { principal: { principalType: 'User', name }, clientAddress, listenerName: 'PLAINTEXT', securityProtocol: 'PLAINTEXT' };
}

function authorizer(acls: AclBinding[], opts: { superUsers?: string[]; allowEveryoneIfNoAclFound?: boolean } = {}): StandardAuthorizer {
  const a = new StandardAuthorizer({ superUsers: opts.superUsers ?? [], allowEveryoneIfNoAclFound: opts.allowEveryoneIfNoAclFound ?? false });
  a.setAcls(acls);
  return a;
}

const alice = session('alice');
const bob = session('bob');

/** Each type with a name its resources may have (CLUSTER has one). */
const RESOURCES: [RT, string][] = [
  [RT.TOPIC, 'orders'], [RT.GROUP, 'billing'], [RT.CLUSTER, 'kafka-cluster'], [RT.TRANSACTIONAL_ID, 'tx-1'],
  [RT.DELEGATION_TOKEN, 'token-1'], [RT.USER, 'User:carol'],
];

/** Kafka's implications, only in ALLOW ACLs: what an ALLOW of `granted` allows besides itself. */
function implied(granted: Op, asked: Op): boolean {
  if (asked === Op.DESCRIBE) return [Op.READ, Op.WRITE, Op.DELETE, Op.ALTER].includes(granted);
  if (asked === Op.DESCRIBE_CONFIGS) return granted === Op.ALTER_CONFIGS;
  return false;
}

describe('StandardAuthorizer', () => {
  describe('decision table: each resource type, each of its operations', () => {
    for (const [type, name] of RESOURCES) {
      const ops = SUPPORTED_OPERATIONS[type]!;
      describe(RT[type], () => {
        for (const op of ops) {
          it(`ALLOW ${Op[op]} allows it (and what it implies) to that principal only; nothing else`, () => {
            const a = authorizer([acl(type, name, LITERAL, 'User:alice', op, ALLOW)], { allowEveryoneIfNoAclFound: true });
            for (const asked of ops) {
              expect(a.authorize(alice, asked, type, name), `${Op[asked]}`).to.equal(asked === op || implied(op, asked));
              // The resource has an ACL: allow.everyone.if.no.acl.found does not apply to bob.
              expect(a.authorize(bob, asked, type, name), `bob ${Op[asked]}`).to.equal(false);
            }
          });

          it(`DENY ${Op[op]} beats ALLOW ALL for that operation only (a DENY implies nothing)`, () => {
            const a = authorizer([acl(type, name, LITERAL, 'User:alice', Op.ALL, ALLOW), acl(type, name, LITERAL, 'User:alice', op, DENY)]);
            for (const asked of ops) expect(a.authorize(alice, asked, type, name), `${Op[asked]}`).to.equal(asked !== op);
          });
        }

        it('ALLOW ALL allows every operation; DENY ALL denies every one', () => {
          const allowed = authorizer([acl(type, name, LITERAL, 'User:alice', Op.ALL, ALLOW)]);
          const denied = authorizer([acl(type, name, LITERAL, 'User:alice', Op.ALL, ALLOW), acl(type, name, LITERAL, 'User:*', Op.ALL, DENY)]);
          for (const asked of ops) {
            expect(allowed.authorize(alice, asked, type, name)).to.equal(true);
            expect(denied.authorize(alice, asked, type, name)).to.equal(false);
          }
        });

        it('an ACL of another resource type does not apply', () => {
          const other = type === RT.TOPIC ? RT.GROUP : RT.TOPIC;
          const a = authorizer([acl(other, name, LITERAL, 'User:alice', Op.ALL, ALLOW)]);
          for (const asked of ops) expect(a.authorize(alice, asked, type, name)).to.equal(false);
        });
      });
    }
  });

  describe('resource patterns', () => {
    it('LITERAL matches the exact name only', () => {
      const a = authorizer([acl(RT.TOPIC, 'foo', LITERAL, 'User:alice', Op.READ, ALLOW)]);
      expect(a.authorize(alice, Op.READ, RT.TOPIC, 'foo')).to.equal(true);
      expect(a.authorize(alice, Op.READ, RT.TOPIC, 'foobar')).to.equal(false);
      expect(a.authorize(alice, Op.READ, RT.TOPIC, 'fo')).to.equal(false);
    });

    it('PREFIXED matches every name starting with it, the prefix itself included', () => {
      const a = authorizer([acl(RT.TOPIC, 'foo', PREFIXED, 'User:alice', Op.READ, ALLOW)]);
      for (const name of ['foo', 'foobar', 'foo.bar']) expect(a.authorize(alice, Op.READ, RT.TOPIC, name), name).to.equal(true);
      for (const name of ['fo', 'bar', 'xfoo']) expect(a.authorize(alice, Op.READ, RT.TOPIC, name), name).to.equal(false);
    });

    it("the LITERAL '*' matches every name; a PREFIXED '*' only names starting with '*'", () => {
      const wildcard = authorizer([acl(RT.GROUP, '*', LITERAL, 'User:alice', Op.READ, ALLOW)]);
      for (const name of ['a', 'billing', '*']) expect(wildcard.authorize(alice, Op.READ, RT.GROUP, name)).to.equal(true);
      const prefixedStar = authorizer([acl(RT.GROUP, '*', PREFIXED, 'User:alice', Op.READ, ALLOW)]);
      expect(prefixedStar.authorize(alice, Op.READ, RT.GROUP, 'billing')).to.equal(false);
      expect(prefixedStar.authorize(alice, Op.READ, RT.GROUP, '*x')).to.equal(true);
    });

    it('a DENY on a prefix, or on the wildcard, beats a LITERAL ALLOW', () => {
      const byPrefix = authorizer([acl(RT.TOPIC, 'secret-1', LITERAL, 'User:alice', Op.READ, ALLOW), acl(RT.TOPIC, 'secret', PREFIXED, 'User:alice', Op.READ, DENY)]);
      expect(byPrefix.authorize(alice, Op.READ, RT.TOPIC, 'secret-1')).to.equal(false);
      const byWildcard = authorizer([acl(RT.TOPIC, 'pub', LITERAL, 'User:alice', Op.READ, ALLOW), acl(RT.TOPIC, '*', LITERAL, 'User:alice', Op.READ, DENY)]);
      expect(byWildcard.authorize(alice, Op.READ, RT.TOPIC, 'pub')).to.equal(false);
    });

    it('several prefixes of one name all apply (prefixes of different lengths)', () => {
      const a = authorizer([
        acl(RT.TOPIC, 'a', PREFIXED, 'User:alice', Op.READ, ALLOW),
        acl(RT.TOPIC, 'abc', PREFIXED, 'User:alice', Op.WRITE, ALLOW),
        acl(RT.TOPIC, 'abcd', PREFIXED, 'User:alice', Op.READ, DENY),
      ]);
      expect(a.authorize(alice, Op.READ, RT.TOPIC, 'abc-x')).to.equal(true);
      expect(a.authorize(alice, Op.WRITE, RT.TOPIC, 'abc-x')).to.equal(true);
      expect(a.authorize(alice, Op.WRITE, RT.TOPIC, 'ab')).to.equal(false);
      expect(a.authorize(alice, Op.READ, RT.TOPIC, 'abcde')).to.equal(false);
    });
  });

  describe('principals and hosts', () => {
    it("'User:*' is every principal; another principal's ACL is not", () => {
      const a = authorizer([acl(RT.TOPIC, 't', LITERAL, 'User:*', Op.READ, ALLOW)]);
      expect(a.authorize(alice, Op.READ, RT.TOPIC, 't')).to.equal(true);
      expect(a.authorize(bob, Op.READ, RT.TOPIC, 't')).to.equal(true);
      const b = authorizer([acl(RT.TOPIC, 't', LITERAL, 'User:bob', Op.READ, ALLOW)]);
      expect(b.authorize(alice, Op.READ, RT.TOPIC, 't')).to.equal(false);
    });

    it('the principal type counts: Group:alice is not User:alice', () => {
      const a = authorizer([acl(RT.TOPIC, 't', LITERAL, 'Group:alice', Op.READ, ALLOW)]);
      expect(a.authorize(alice, Op.READ, RT.TOPIC, 't')).to.equal(false);
    });

    it("a host ACL applies to that client address only; '*' to every one", () => {
      const a = authorizer([acl(RT.TOPIC, 't', LITERAL, 'User:alice', Op.READ, ALLOW, '10.0.0.1')]);
      expect(a.authorize(session('alice', '10.0.0.1'), Op.READ, RT.TOPIC, 't')).to.equal(true);
      expect(a.authorize(session('alice', '10.0.0.2'), Op.READ, RT.TOPIC, 't')).to.equal(false);
      const deniedOne = authorizer([acl(RT.TOPIC, 't', LITERAL, 'User:*', Op.READ, ALLOW), acl(RT.TOPIC, 't', LITERAL, 'User:*', Op.READ, DENY, '10.0.0.9')]);
      expect(deniedOne.authorize(session('alice', '10.0.0.9'), Op.READ, RT.TOPIC, 't')).to.equal(false);
      expect(deniedOne.authorize(session('alice', '10.0.0.1'), Op.READ, RT.TOPIC, 't')).to.equal(true);
    });
  });

  describe('implied operations', () => {
    it('DESCRIBE from READ, WRITE, DELETE, ALTER; DESCRIBE_CONFIGS from ALTER_CONFIGS; not the other way', () => {
      for (const op of [Op.READ, Op.WRITE, Op.DELETE, Op.ALTER]) {
        expect(authorizer([acl(RT.TOPIC, 't', LITERAL, 'User:alice', op, ALLOW)]).authorize(alice, Op.DESCRIBE, RT.TOPIC, 't'), Op[op]).to.equal(true);
      }
      for (const op of [Op.CREATE, Op.DESCRIBE_CONFIGS, Op.ALTER_CONFIGS]) {
        expect(authorizer([acl(RT.TOPIC, 't', LITERAL, 'User:alice', op, ALLOW)]).authorize(alice, Op.DESCRIBE, RT.TOPIC, 't'), Op[op]).to.equal(false);
      }
      expect(authorizer([acl(RT.TOPIC, 't', LITERAL, 'User:alice', Op.ALTER_CONFIGS, ALLOW)]).authorize(alice, Op.DESCRIBE_CONFIGS, RT.TOPIC, 't')).to.equal(true);
      expect(authorizer([acl(RT.TOPIC, 't', LITERAL, 'User:alice', Op.ALTER, ALLOW)]).authorize(alice, Op.DESCRIBE_CONFIGS, RT.TOPIC, 't')).to.equal(false);
      expect(authorizer([acl(RT.TOPIC, 't', LITERAL, 'User:alice', Op.DESCRIBE, ALLOW)]).authorize(alice, Op.READ, RT.TOPIC, 't')).to.equal(false);
    });

    it('a DENY of READ does not deny DESCRIBE that a WRITE allows', () => {
      const a = authorizer([acl(RT.TOPIC, 't', LITERAL, 'User:alice', Op.WRITE, ALLOW), acl(RT.TOPIC, 't', LITERAL, 'User:alice', Op.READ, DENY)]);
      expect(a.authorize(alice, Op.DESCRIBE, RT.TOPIC, 't')).to.equal(true);
      expect(a.authorize(alice, Op.READ, RT.TOPIC, 't')).to.equal(false);
    });
  });

  describe('super users and allow.everyone.if.no.acl.found', () => {
    it('a super user is allowed everything, a DENY ALL for it notwithstanding', () => {
      const a = authorizer([acl(RT.TOPIC, '*', LITERAL, 'User:admin', Op.ALL, DENY)], { superUsers: parseSuperUsers(' User:admin ;User:ops;;') });
      expect(a.authorize(session('admin'), Op.DELETE, RT.TOPIC, 't')).to.equal(true);
      expect(a.authorize(session('ops'), Op.CLUSTER_ACTION, RT.CLUSTER, 'kafka-cluster')).to.equal(true);
      expect(a.authorize(alice, Op.READ, RT.TOPIC, 't')).to.equal(false);
    });

    it('a resource without any ACL: denied by default, allowed with allow.everyone.if.no.acl.found', () => {
      const acls = [acl(RT.TOPIC, 'guarded', LITERAL, 'User:bob', Op.READ, ALLOW)];
      expect(authorizer(acls).authorize(alice, Op.READ, RT.TOPIC, 'open')).to.equal(false);
      expect(authorizer(acls, { allowEveryoneIfNoAclFound: true }).authorize(alice, Op.READ, RT.TOPIC, 'open')).to.equal(true);
      // An ACL naming the resource, for anyone, makes it guarded.
      expect(authorizer(acls, { allowEveryoneIfNoAclFound: true }).authorize(alice, Op.READ, RT.TOPIC, 'guarded')).to.equal(false);
      // A PREFIXED or wildcard ACL counts as naming it.
      expect(authorizer([acl(RT.TOPIC, 'gu', PREFIXED, 'User:bob', Op.READ, ALLOW)], { allowEveryoneIfNoAclFound: true })
        .authorize(alice, Op.READ, RT.TOPIC, 'guarded')).to.equal(false);
      expect(authorizer([acl(RT.TOPIC, '*', LITERAL, 'User:bob', Op.READ, ALLOW)], { allowEveryoneIfNoAclFound: true })
        .authorize(alice, Op.READ, RT.TOPIC, 'guarded')).to.equal(false);
    });

    it('new ACLs apply as soon as they are set', () => {
      const a = authorizer([]);
      expect(a.authorize(alice, Op.READ, RT.TOPIC, 't')).to.equal(false);
      a.setAcls([acl(RT.TOPIC, 't', LITERAL, 'User:alice', Op.READ, ALLOW)]);
      expect(a.authorize(alice, Op.READ, RT.TOPIC, 't')).to.equal(true);
      a.setAcls([]);
      expect(a.authorize(alice, Op.READ, RT.TOPIC, 't')).to.equal(false);
    });
  });

  describe('authorizeByResourceType (KIP-679)', () => {
    const byType = (acls: AclBinding[], s = alice, op = Op.WRITE, opts = {}) => authorizer(acls, opts).authorizeByResourceType(s, op, RT.TOPIC);

    it('no ACL: denied, unless allow.everyone.if.no.acl.found; a super user always', () => {
      expect(byType([])).to.equal(false);
      expect(byType([], alice, Op.WRITE, { allowEveryoneIfNoAclFound: true })).to.equal(true);
      expect(byType([acl(RT.TOPIC, '*', LITERAL, 'User:*', Op.ALL, DENY)], session('admin'), Op.WRITE, { superUsers: ['User:admin'] })).to.equal(true);
    });

    it('an ALLOW on one literal topic is enough; a DENY of the same literal cancels it', () => {
      expect(byType([acl(RT.TOPIC, 'foo', LITERAL, 'User:alice', Op.WRITE, ALLOW)])).to.equal(true);
      expect(byType([acl(RT.TOPIC, 'foo', LITERAL, 'User:alice', Op.WRITE, ALLOW), acl(RT.TOPIC, 'foo', LITERAL, 'User:alice', Op.WRITE, DENY)])).to.equal(false);
      expect(byType([acl(RT.TOPIC, 'foo', LITERAL, 'User:alice', Op.WRITE, ALLOW), acl(RT.TOPIC, 'bar', LITERAL, 'User:alice', Op.WRITE, DENY)])).to.equal(true);
    });

    it('a PREFIXED DENY dominates the ALLOWs under it, not those beside or above it', () => {
      expect(byType([acl(RT.TOPIC, 'foobar', LITERAL, 'User:alice', Op.WRITE, ALLOW), acl(RT.TOPIC, 'foo', PREFIXED, 'User:alice', Op.WRITE, DENY)])).to.equal(false);
      expect(byType([acl(RT.TOPIC, 'foo', PREFIXED, 'User:alice', Op.WRITE, ALLOW), acl(RT.TOPIC, 'fo', PREFIXED, 'User:alice', Op.WRITE, DENY)])).to.equal(false);
      expect(byType([acl(RT.TOPIC, 'foo', PREFIXED, 'User:alice', Op.WRITE, ALLOW), acl(RT.TOPIC, 'foob', PREFIXED, 'User:alice', Op.WRITE, DENY)])).to.equal(true);
      // A LITERAL DENY does not dominate a PREFIXED ALLOW of the same name.
      expect(byType([acl(RT.TOPIC, 'foo', PREFIXED, 'User:alice', Op.WRITE, ALLOW), acl(RT.TOPIC, 'foo', LITERAL, 'User:alice', Op.WRITE, DENY)])).to.equal(true);
    });

    it("a LITERAL '*' DENY denies outright; a LITERAL '*' ALLOW allows outright", () => {
      expect(byType([acl(RT.TOPIC, 'foo', LITERAL, 'User:alice', Op.WRITE, ALLOW), acl(RT.TOPIC, '*', LITERAL, 'User:alice', Op.WRITE, DENY)])).to.equal(false);
      expect(byType([acl(RT.TOPIC, '*', LITERAL, 'User:alice', Op.WRITE, ALLOW), acl(RT.TOPIC, 'foo', LITERAL, 'User:alice', Op.WRITE, DENY)])).to.equal(true);
    });

    it('only the operation itself or ALL counts (no implied operations); principal and host must match', () => {
      expect(byType([acl(RT.TOPIC, 'foo', LITERAL, 'User:alice', Op.READ, ALLOW)])).to.equal(false);
      expect(byType([acl(RT.TOPIC, 'foo', LITERAL, 'User:alice', Op.ALL, ALLOW)])).to.equal(true);
      expect(byType([acl(RT.TOPIC, 'foo', LITERAL, 'User:alice', Op.READ, ALLOW)], alice, Op.DESCRIBE)).to.equal(false);
      expect(byType([acl(RT.TOPIC, 'foo', LITERAL, 'User:bob', Op.WRITE, ALLOW)])).to.equal(false);
      expect(byType([acl(RT.TOPIC, 'foo', LITERAL, 'User:*', Op.WRITE, ALLOW)])).to.equal(true);
      expect(byType([acl(RT.TOPIC, 'foo', LITERAL, 'User:alice', Op.WRITE, ALLOW, '10.9.9.9')])).to.equal(false);
      expect(byType([acl(RT.GROUP, 'foo', LITERAL, 'User:alice', Op.WRITE, ALLOW)])).to.equal(false);
    });
  });

  describe('kafka.authorizer.logger', () => {
    function logged(level: string, check: (a: StandardAuthorizer) => void): { level: number; msg: string; logger: string }[] {
      const lines: string[] = [];
      const sink = new Writable({ write(chunk: Buffer, _enc, done) { lines.push(chunk.toString()); done(); } });
      const a = new StandardAuthorizer({ superUsers: ['User:admin'], allowEveryoneIfNoAclFound: false, logger: pino({ level }, sink) });
      a.setAcls([acl(RT.TOPIC, 't', LITERAL, 'User:alice', Op.READ, DENY)]);
      check(a);
      return lines.map((l) => JSON.parse(l) as { level: number; msg: string; logger: string });
    }

    it('logs a denial at info with Kafka\'s words, naming the ACL that decided', () => {
      const out = logged('info', (a) => a.authorize(alice, Op.READ, RT.TOPIC, 't', { requestName: 'Fetch' }));
      expect(out).to.have.length(1);
      expect(out[0].logger).to.equal('kafka.authorizer.logger');
      expect(out[0].level).to.equal(30);
      expect(out[0].msg).to.equal('Principal = User:alice is Denied operation = READ from host = 10.0.0.1 on resource = Topic:LITERAL:t '
        + 'for request = Fetch with resourceRefCount = 1 based on rule MatchingAcl(acl=StandardAcl(resourceType=TOPIC, resourceName=t, '
        + 'patternType=LITERAL, principal=User:alice, host=*, operation=READ, permissionType=DENY))');
    });

    it('logs grants at debug, and checks that only compute authorized operations at trace', () => {
      const out = logged('debug', (a) => {
        a.authorize(session('admin'), Op.ALTER, RT.TRANSACTIONAL_ID, 'tx', { requestName: 'InitProducerId' });
        a.authorize(bob, Op.READ, RT.TOPIC, 'u', { requestName: 'Metadata', logIfDenied: false });
      });
      expect(out.map((l) => [l.level, l.msg])).to.deep.equal([[20, 'Principal = User:admin is Allowed operation = ALTER from host = 10.0.0.1 '
        + 'on resource = TransactionalId:LITERAL:tx for request = InitProducerId with resourceRefCount = 1 based on rule SuperUser']]);
    });
  });
});
