// OAUTHBEARER pieces on their own: the client's first message (RFC 7628), Kafka's unsecured
// validator's scope check, and JWT validation against a JWKS fetched over HTTP (ES256), with the
// refresh when a token names a key the cached JWKS does not hold.
import { expect } from 'chai';
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  JwksJwtValidator, JwksKeys, OAuthBearerSaslServer, UnsecuredJwsValidator, oauthBearerClientMessage, parseClientInitialResponse,
  unsecuredValidatorOptions,
} from '../../src/security/oauthbearer';
import { SaslAuthenticationError } from '../../src/security/sasl';

const enc = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
const now = () => Math.floor(Date.now() / 1000);

function es256(key: KeyObject, kid: string, claims: object): string {
  const input = `${enc({ alg: 'ES256', kid })}.${enc(claims)}`;
  return `${input}.${sign('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`;
}

describe('OAUTHBEARER', () => {
  it('parses the client first message: authzid, auth=Bearer among extensions; refuses other forms', () => {
    expect(parseClientInitialResponse('n,a=alice,\x01auth=Bearer abc.def.\x01traceId=42\x01\x01'))
      .to.deep.equal({ authorizationId: 'alice', tokenValue: 'abc.def.' });
    expect(parseClientInitialResponse(oauthBearerClientMessage('t.u.v').toString()).tokenValue).to.equal('t.u.v');
    expect(() => parseClientInitialResponse('n,,\x01auth=Basic abc\x01\x01')).to.throw('Invalid scheme in OAUTHBEARER client first message: Basic');
    expect(() => parseClientInitialResponse('n,,auth=Bearer abc')).to.throw('Invalid OAUTHBEARER client first message');
    expect(() => parseClientInitialResponse('n,,\x01other=x\x01\x01')).to.throw('Invalid OAUTHBEARER client first message');
  });

  it('unsecured tokens: a missing required scope is insufficient_scope naming it; a custom principal claim; authzid must match', async () => {
    const validator = new UnsecuredJwsValidator(unsecuredValidatorOptions(new Map([
      ['unsecuredValidatorRequiredScope', 'read write'], ['unsecuredValidatorPrincipalClaimName', 'principal'],
    ])));
    const token = (scope: string) => `${enc({ alg: 'none' })}.${enc({ principal: 'svc', exp: now() + 60, scope })}.`;
    expect(validator.validate(token('read'))).to.include({ errorStatus: 'insufficient_scope', errorScope: 'read write' });
    expect(validator.validate(token('write read admin'))).to.have.nested.property('token.principalName', 'svc');

    const server = new OAuthBearerSaslServer(validator);
    expect((await server.evaluateResponse(oauthBearerClientMessage(token('read')))).toString())
      .to.equal('{"status":"insufficient_scope", "scope":"read write"}');
    let error: unknown;
    try {
      await new OAuthBearerSaslServer(validator).evaluateResponse(oauthBearerClientMessage(token('read write'), 'someone-else'));
    } catch (e) {
      error = e;
    }
    expect(error).to.be.instanceOf(SaslAuthenticationError);
  });

  it('ES256 tokens against a JWKS served over HTTP, fetched again for an unknown key id', async () => {
    const first = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const second = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    let keys = [{ ...first.publicKey.export({ format: 'jwk' }), kid: 'one' }];
    let fetches = 0;
    const server = http.createServer((_req, res) => {
      fetches++;
      res.end(JSON.stringify({ keys }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks`;
      const validator = new JwksJwtValidator(new JwksKeys(url, 3_600_000), {
        expectedAudience: [], expectedIssuer: null, subClaimName: 'sub', scopeClaimName: 'scope', clockSkewSeconds: 30,
      });
      const claims = { sub: 'svc', exp: now() + 60 };
      expect(await validator.validate(es256(first.privateKey, 'one', claims))).to.have.nested.property('token.principalName', 'svc');
      expect(fetches).to.equal(1);
      // The issuer rotates keys: a token naming the new one makes the JWKS be fetched again (after 1 s).
      keys = [...keys, { ...second.publicKey.export({ format: 'jwk' }), kid: 'two' }];
      await new Promise((r) => setTimeout(r, 1100));
      expect(await validator.validate(es256(second.privateKey, 'two', claims))).to.have.nested.property('token.principalName', 'svc');
      expect(fetches).to.equal(2);
      // A token signed by another key under a known id is refused.
      expect(await validator.validate(es256(second.privateKey, 'one', claims))).to.include({ errorStatus: 'invalid_token' });
      // nbf in the future beyond the skew.
      expect(await validator.validate(es256(first.privateKey, 'one', { ...claims, nbf: now() + 120 }))).to.include({ errorStatus: 'invalid_token' });
    } finally {
      server.close();
    }
  });
});
