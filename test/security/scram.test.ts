// SCRAM-SHA-256 / SCRAM-SHA-512 (src/security/scram.ts): RFC 7677's SCRAM-SHA-256 exchange replayed
// byte for byte through the server and the client, credentials derived as Kafka 4.4's ScramFormatter
// derives them (vectors printed by kafka-clients 4.4.0's ScramFormatter and
// ScramCredentialUtils.credentialToString through jshell), SHA-512 round trips, and the refusals:
// wrong password, unknown user, tampered nonce and proof, a foreign authzid, delegation tokens. A
// refusal is a ScramFailure (Kafka's SaslException: the client gets the generic message, the reason
// is logged) except for the authzid one, a SaslAuthenticationError worded for the client.
import { expect } from 'chai';
import { SaslAuthenticationError, type ScramCredential, type ScramMechanism } from '../../src/security/sasl';
import {
  ScramFailure, ScramSaslClient, ScramSaslServer, credentialFromSaltedPassword, saltedPassword, scramCredential,
} from '../../src/security/scram';

const lookupOf = (users: Record<string, Partial<Record<ScramMechanism, ScramCredential>>>) => ({
  scramCredential: (user: string, mechanism: ScramMechanism) => users[user]?.[mechanism] ?? null,
});

/** The reason of the ScramFailure `f` throws. */
function refusal(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    expect(e).to.be.instanceOf(ScramFailure);
    expect(e).not.to.be.instanceOf(SaslAuthenticationError);
    return (e as ScramFailure).message;
  }
  throw new Error('expected a ScramFailure');
}

/** Runs a whole exchange; the server once complete. */
function exchange(server: ScramSaslServer, client: ScramSaslClient): ScramSaslServer {
  const serverFirst = server.evaluateResponse(client.firstMessage());
  client.verifyServerFinal(server.evaluateResponse(client.finalMessage(serverFirst)));
  return server;
}

describe('SCRAM (RFC 5802 / RFC 7677) as Kafka 4.4 speaks it', () => {
  describe('RFC 7677 section 3: the SCRAM-SHA-256 example exchange', () => {
    const credential = scramCredential('SCRAM-SHA-256', 'pencil', 4096, Buffer.from('W22ZaJ0SNY7soEsUEjb6gQ==', 'base64'));
    const users = lookupOf({ user: { 'SCRAM-SHA-256': credential } });
    const serverNonce = () => '%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0';

    it('the server answers the RFC\'s client messages with the RFC\'s server messages', () => {
      const server = new ScramSaslServer('SCRAM-SHA-256', users, { serverNonce });
      expect(server.evaluateResponse(Buffer.from('n,,n=user,r=rOprNGfwEbeRWgbNEkqO')).toString()).to.equal(
        'r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096');
      expect(server.isComplete()).to.equal(false);
      expect(server.evaluateResponse(Buffer.from(
        'c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=')).toString())
        .to.equal('v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=');
      expect(server.isComplete()).to.equal(true);
      expect(server.authorizationId()).to.equal('user');
      expect(server.credentialExpiresAtMs()).to.equal(null);
    });

    it('the client sends the RFC\'s client messages and accepts its server signature', () => {
      const client = new ScramSaslClient('SCRAM-SHA-256', 'user', 'pencil', { clientNonce: 'rOprNGfwEbeRWgbNEkqO' });
      expect(client.firstMessage().toString()).to.equal('n,,n=user,r=rOprNGfwEbeRWgbNEkqO');
      expect(client.finalMessage(Buffer.from('r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096')).toString())
        .to.equal('c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=');
      client.verifyServerFinal(Buffer.from('v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4='));
      expect(() => client.verifyServerFinal(Buffer.from('v=7rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4='))).to.throw('Invalid server signature');
      expect(() => client.verifyServerFinal(Buffer.from('e=other-error'))).to.throw('failed with error: other-error');
    });
  });

  describe('credentials derived as Kafka 4.4\'s ScramFormatter derives them', () => {
    // jshell on kafka-clients 4.4.0: ScramFormatter.saltedPassword("alice-secret", "fjord-salt-0001", 8192),
    // then generateCredential(salt, saltedPassword, 8192) through ScramCredentialUtils.credentialToString.
    const salt = Buffer.from('fjord-salt-0001');
    const vectors: [ScramMechanism, string, string, string][] = [
      ['SCRAM-SHA-256', 'gqGWZK5Ph0+w91H479MyiP+jtEWMwf5rPjgDIzzPu1A=',
        'Sj76m2ysurNikZNoCAF2cx+lIOeqWIiXtHCgu3Y5AEY=', 'Gi9vV5T3RekHJwLKZDATBDxNaPuOWWKwo3UKern3FbY='],
      ['SCRAM-SHA-512', '1Col2OBOV4ujksXWQkjVNzCJGVcfVYEdqSvJ+lE/lfU/FzfG1LFABis/B8LxkIcLaXy6Mp8ARfnHvI1Vocy2xQ==',
        'yQIlyb40e13arBp53uDD3YoWEWV7Ekmo2t7fjJJGwBfINyjAIBeO3ogORgMPIFLnA2PqkEdE5B0YK/O3zGFF+g==',
        'R/FoXuOkNAm5wSAuUyK4WHpVvjwL5q609R8tXmLDsDUg8wLRnUCmzSC8XAFFN30y4h758RqQG/7b5mckqC0flg=='],
    ];
    for (const [mechanism, salted, storedKey, serverKey] of vectors) {
      it(`${mechanism}: salted password, stored key and server key`, () => {
        const computed = saltedPassword(mechanism, 'alice-secret', salt, 8192);
        expect(computed.toString('base64')).to.equal(salted);
        const credential = credentialFromSaltedPassword(mechanism, salt, computed, 8192);
        expect(credential.storedKey.toString('base64')).to.equal(storedKey);
        expect(credential.serverKey.toString('base64')).to.equal(serverKey);
        expect(credential.iterations).to.equal(8192);
      });
    }
  });

  describe('exchanges and refusals', () => {
    const alice512 = scramCredential('SCRAM-SHA-512', 'alice-secret', 4096);
    const alice256 = scramCredential('SCRAM-SHA-256', 'alice-secret', 8192);
    const users = lookupOf({ alice: { 'SCRAM-SHA-512': alice512, 'SCRAM-SHA-256': alice256 }, 'a,b=c': { 'SCRAM-SHA-256': alice256 } });

    it('SCRAM-SHA-512 and SCRAM-SHA-256 round trips with random nonces', () => {
      for (const mechanism of ['SCRAM-SHA-512', 'SCRAM-SHA-256'] as const) {
        const server = exchange(new ScramSaslServer(mechanism, users), new ScramSaslClient(mechanism, 'alice', 'alice-secret'));
        expect(server.isComplete()).to.equal(true);
        expect(server.authorizationId()).to.equal('alice');
      }
    });

    it('a user name with \',\' and \'=\' travels escaped (=2C, =3D) and is looked up unescaped', () => {
      const client = new ScramSaslClient('SCRAM-SHA-256', 'a,b=c', 'alice-secret');
      expect(client.firstMessage().toString()).to.match(/^n,,n=a=2Cb=3Dc,r=/);
      expect(exchange(new ScramSaslServer('SCRAM-SHA-256', users), client).authorizationId()).to.equal('a,b=c');
    });

    it('an authzid equal to the user is accepted; another is refused with Kafka\'s own message', () => {
      expect(exchange(new ScramSaslServer('SCRAM-SHA-256', users),
        new ScramSaslClient('SCRAM-SHA-256', 'alice', 'alice-secret', { authorizationId: 'alice' })).authorizationId()).to.equal('alice');
      const server = new ScramSaslServer('SCRAM-SHA-256', users);
      expect(() => server.evaluateResponse(new ScramSaslClient('SCRAM-SHA-256', 'alice', 'alice-secret', { authorizationId: 'bob' }).firstMessage()))
        .to.throw(SaslAuthenticationError, /^Authentication failed: Client requested an authorization id that is different from username$/);
      expect(server.isComplete()).to.equal(false);
    });

    it('a wrong password is refused at the client-final message', () => {
      const server = new ScramSaslServer('SCRAM-SHA-512', users);
      const client = new ScramSaslClient('SCRAM-SHA-512', 'alice', 'wrong');
      const serverFirst = server.evaluateResponse(client.firstMessage());
      expect(refusal(() => server.evaluateResponse(client.finalMessage(serverFirst)))).to.equal('Invalid client credentials');
      expect(server.isComplete()).to.equal(false);
      // A failed exchange stays failed.
      expect(refusal(() => server.evaluateResponse(client.firstMessage()))).to.equal('unexpected SCRAM message in state failed');
    });

    it('an unknown user, or a user without a credential of that mechanism, is refused at once', () => {
      for (const [mechanism, user] of [['SCRAM-SHA-256', 'mallory'], ['SCRAM-SHA-512', 'a,b=c']] as const) {
        expect(refusal(() => new ScramSaslServer(mechanism, users).evaluateResponse(new ScramSaslClient(mechanism, user, 'x').firstMessage())))
          .to.equal('Authentication failed: Invalid user credentials');
      }
    });

    it('a client-final message with another nonce, or a tampered proof, is refused', () => {
      const tamper = (edit: (clientFinal: string) => string, reason: string) => {
        const server = new ScramSaslServer('SCRAM-SHA-256', users);
        const client = new ScramSaslClient('SCRAM-SHA-256', 'alice', 'alice-secret');
        const clientFinal = client.finalMessage(server.evaluateResponse(client.firstMessage())).toString();
        expect(refusal(() => server.evaluateResponse(Buffer.from(edit(clientFinal))))).to.equal(reason);
      };
      tamper((m) => m.replace(/,r=([^,]+)/, (_, nonce: string) => `,r=${nonce}x`), 'Invalid client nonce in the final client message.');
      tamper((m) => m.replace(/,r=[^,]+/, ',r=attacker-nonce'), 'Invalid client nonce in the final client message.');
      tamper((m) => m.replace(/p=(.)/, (_, c: string) => `p=${c === 'A' ? 'B' : 'A'}`), 'Invalid client credentials');
      tamper((m) => m.replace(/p=.*/, 'p=AAAA'), 'Invalid client credentials');
    });

    it('a server nonce that does not extend the client\'s, or too few iterations, is refused by the client', () => {
      const client = new ScramSaslClient('SCRAM-SHA-256', 'alice', 'alice-secret', { clientNonce: 'abc' });
      client.firstMessage();
      expect(() => client.finalMessage(Buffer.from('r=xyzdef,s=QUJD,i=4096'))).to.throw('Invalid server nonce');
      expect(() => client.finalMessage(Buffer.from('r=abcdef,s=QUJD,i=4095'))).to.throw('Requested iterations 4095 is less than the minimum 4096');
    });

    it('malformed messages, channel binding and delegation tokens are refused', () => {
      for (const first of ['', 'garbage', 'y,,n=alice,r=abc', 'p=tls-unique,,n=alice,r=abc', 'n,,n=alice', 'n,,n=al\u00e9ice,r=abc']) {
        expect(refusal(() => new ScramSaslServer('SCRAM-SHA-256', users).evaluateResponse(Buffer.from(first))), first)
          .to.equal(`Invalid SCRAM client first message format: ${first}`);
      }
      expect(refusal(() => new ScramSaslServer('SCRAM-SHA-256', users).evaluateResponse(Buffer.from('n,,n=alice,r=abc,tokenauth=true'))))
        .to.equal('delegation token authentication is not supported');
      const server = new ScramSaslServer('SCRAM-SHA-256', users);
      server.evaluateResponse(Buffer.from('n,,n=alice,r=abc,other=ignored'));
      expect(refusal(() => server.evaluateResponse(Buffer.from('c=biws,r=abc')))).to.equal('Invalid SCRAM client final message format: c=biws,r=abc');
    });

    it('a stored credential with fewer iterations than the minimum is refused', () => {
      const weak = lookupOf({ old: { 'SCRAM-SHA-256': scramCredential('SCRAM-SHA-256', 'x', 1000) } });
      expect(refusal(() => new ScramSaslServer('SCRAM-SHA-256', weak).evaluateResponse(new ScramSaslClient('SCRAM-SHA-256', 'old', 'x').firstMessage())))
        .to.equal('Iterations 1000 is less than the minimum 4096 for SCRAM-SHA-256');
    });
  });
});
