// SASL on a SASL_PLAINTEXT listener, end to end: kafkajs and raw frames against an in-process broker.
// PLAIN (ok, bad password, the v0 bare-token form), UNSUPPORTED_SASL_MECHANISM, only ApiVersions and
// SASL before authentication, the failed-authentication delay, OAUTHBEARER with unsecured tokens and
// with RS256 JWTs verified against a JWKS file, KIP-368 re-authentication, and a stalled exchange.
import { expect } from 'chai';
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Writable } from 'node:stream';
import { Kafka, logLevel, type SASLOptions } from 'kafkajs';
import { ApiKey } from '../../src/protocol/generated';
import type { SaslHandshakeResponse } from '../../src/protocol/generated/SaslHandshakeResponse';
import type { SaslAuthenticateResponse } from '../../src/protocol/generated/SaslAuthenticateResponse';
import type { ApiVersionsResponse } from '../../src/protocol/generated/ApiVersionsResponse';
import type { MetadataResponse } from '../../src/protocol/generated/MetadataResponse';
import { ErrorCode } from '../../src/common/errors';
import { createLogger } from '../../src/common/logger';
import { startBroker, type RunningBroker } from '../../src/broker';
import { plainClientMessage } from '../../src/security/plain';
import { oauthBearerClientMessage } from '../../src/security/oauthbearer';
import { RawClient } from '../helpers/raw-client';
import { eventually } from '../helpers/eventually';

const PLAIN_JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" ' +
  'user_admin="admin-secret" user_alice="alice-secret";';
const OAUTH_JAAS = 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub="admin";';

/** A broker on a SASL_PLAINTEXT listener with `props` on top, its log lines collected. */
async function saslBroker(props: Record<string, string>, level = 'info'): Promise<{ broker: RunningBroker; lines: Record<string, unknown>[] }> {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split('\n')) if (l) lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  const broker = await startBroker({
    logger: createLogger({ level, format: 'json', destination }),
    config: { listeners: 'SASL_PLAINTEXT://127.0.0.1:0', 'num.partitions': '1', ...props },
  });
  return { broker, lines };
}

/**
 * A suite's saslBroker: started before its tests and closed after them; the raw clients `connect`
 * opens are closed after each test.
 */
function withSaslBroker(props: Record<string, string>, level?: string) {
  let started: { broker: RunningBroker; lines: Record<string, unknown>[] } | undefined;
  const clients: RawClient[] = [];
  const current = () => {
    if (!started) throw new Error('SASL broker not started');
    return started;
  };
  before(async () => {
    started = await saslBroker(props, level);
  });
  afterEach(() => {
    for (const c of clients.splice(0)) c.close();
  });
  after(async () => {
    await started?.broker.close();
  });
  return {
    get broker() {
      return current().broker;
    },
    get lines() {
      return current().lines;
    },
    connect: async () => {
      const c = await RawClient.connect(current().broker.port);
      clients.push(c);
      return c;
    },
  };
}

function kafka(broker: RunningBroker, sasl: SASLOptions, extra: { reauthenticationThreshold?: number } = {}): Kafka {
  return new Kafka({ clientId: 'sasl-test', brokers: [broker.bootstrap], sasl, logLevel: logLevel.NOTHING, retry: { retries: 0 }, ...extra });
}

/** An unsecured (alg none) JWS, as kafkajs users and Kafka's unsecured login module make them. */
function unsecuredToken(claims: Record<string, unknown>): string {
  const enc = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${enc({ alg: 'none' })}.${enc(claims)}.`;
}

function signedToken(key: KeyObject, kid: string, claims: Record<string, unknown>): string {
  const enc = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const input = `${enc({ alg: 'RS256', typ: 'JWT', kid })}.${enc(claims)}`;
  return `${input}.${sign('sha256', Buffer.from(input), key).toString('base64url')}`;
}

const nowSeconds = () => Math.floor(Date.now() / 1000);

async function handshake(c: RawClient, mechanism: string, version = 1): Promise<SaslHandshakeResponse> {
  return c.request<SaslHandshakeResponse>(ApiKey.SaslHandshake, version, { mechanism });
}

async function authenticate(c: RawClient, bytes: Buffer, version = 2): Promise<SaslAuthenticateResponse> {
  return c.request<SaslAuthenticateResponse>(ApiKey.SaslAuthenticate, version, { authBytes: bytes });
}

async function metadata(c: RawClient): Promise<MetadataResponse> {
  return c.request<MetadataResponse>(ApiKey.Metadata, 12, { topics: [], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
}

/** Resolves with the ms until the broker closes the connection. */
async function closedWithin(c: RawClient, ms: number, started = Date.now()): Promise<number> {
  await eventually(() => c.ended, 'the broker closes the connection', ms);
  return Date.now() - started;
}

describe('SASL on a SASL_PLAINTEXT listener', function () {
  this.timeout(30_000);
  const suite = withSaslBroker({
    'sasl.enabled.mechanisms': 'PLAIN,OAUTHBEARER',
    'listener.name.sasl_plaintext.plain.sasl.jaas.config': PLAIN_JAAS,
    'listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config': OAUTH_JAAS,
    'connection.failed.authentication.delay.ms': '300',
  });
  const { connect } = suite;

  it('PLAIN through kafkajs: the right password produces and reads metadata, a wrong one gets Kafka\'s message', async () => {
    const producer = kafka(suite.broker, { mechanism: 'plain', username: 'alice', password: 'alice-secret' }).producer();
    await producer.connect();
    await producer.send({ topic: 'sasl-plain', messages: [{ value: 'hello' }] });
    await producer.disconnect();

    const bad = kafka(suite.broker, { mechanism: 'plain', username: 'alice', password: 'wrong' }).admin();
    let error: Error | null = null;
    try {
      await bad.connect();
      await bad.listTopics();
    } catch (e) {
      error = e as Error;
    }
    await bad.disconnect();
    expect(error?.name).to.equal('KafkaJSSASLAuthenticationError');
    expect(error?.message).to.contain('Authentication failed: Invalid username or password');
    // Logged at info with the peer and mechanism, never the password.
    const failure = suite.lines.find((l) => String(l.msg).startsWith('Failed authentication'));
    expect(failure).to.include({ mechanism: 'PLAIN' });
    expect(JSON.stringify(suite.lines)).not.to.contain('wrong');
  });

  it('raw frames: ApiVersions lists SASL, handshake v1 lists the mechanisms, then SaslAuthenticate and Metadata', async () => {
    const c = await connect();
    const versions = await c.request<ApiVersionsResponse>(ApiKey.ApiVersions, 3, { clientSoftwareName: 't', clientSoftwareVersion: '1' });
    expect(versions.apiKeys.find((k) => k.apiKey === ApiKey.SaslHandshake)).to.include({ minVersion: 0, maxVersion: 1 });
    expect(versions.apiKeys.find((k) => k.apiKey === ApiKey.SaslAuthenticate)).to.include({ minVersion: 0, maxVersion: 2 });
    expect(await handshake(c, 'PLAIN')).to.deep.equal({ errorCode: ErrorCode.NONE, mechanisms: ['PLAIN', 'OAUTHBEARER'] });
    const auth = await authenticate(c, plainClientMessage('admin', 'admin-secret'));
    expect(auth.errorCode).to.equal(ErrorCode.NONE);
    expect(auth.sessionLifetimeMs).to.equal(0n);
    expect((await metadata(c)).brokers).to.have.length(1);
    // The exchange is over: another one is an illegal state, as Kafka answers (no re-authentication
    // starts without a session lifetime... nor with this client, which used v2: a handshake restarts it).
    c.send(ApiKey.SaslAuthenticate, 2, { authBytes: plainClientMessage('admin', 'admin-secret') });
    const again = await c.receive<SaslAuthenticateResponse>(ApiKey.SaslAuthenticate, 2);
    expect(again.body.errorCode).to.equal(ErrorCode.ILLEGAL_SASL_STATE);
  });

  it('SaslHandshake v0 then a bare token: PLAIN answered with an empty bare frame, then requests are served', async () => {
    const c = await connect();
    expect((await handshake(c, 'PLAIN', 0)).errorCode).to.equal(ErrorCode.NONE);
    const token = plainClientMessage('alice', 'alice-secret');
    const frame = Buffer.alloc(4 + token.length);
    frame.writeInt32BE(token.length);
    token.copy(frame, 4);
    c.sendBytes(frame);
    expect((await c.receiveFrame()).length).to.equal(0);
    expect((await metadata(c)).brokers).to.have.length(1);
  });

  it('SaslHandshake v0 then a bad bare token: closed after the failure delay', async () => {
    const c = await connect();
    await handshake(c, 'PLAIN', 0);
    const token = plainClientMessage('alice', 'nope');
    const frame = Buffer.alloc(4 + token.length);
    frame.writeInt32BE(token.length);
    token.copy(frame, 4);
    const started = Date.now();
    c.sendBytes(frame);
    expect(await closedWithin(c, 3000, started)).to.be.at.least(280);
  });

  it('an unsupported mechanism: UNSUPPORTED_SASL_MECHANISM with the enabled list, then the connection closes', async () => {
    const c = await connect();
    expect(await handshake(c, 'SCRAM-SHA-256')).to.deep.equal({ errorCode: ErrorCode.UNSUPPORTED_SASL_MECHANISM, mechanisms: ['PLAIN', 'OAUTHBEARER'] });
    await closedWithin(c, 2000);
  });

  it('before authentication, a Metadata request closes the connection, logged with Kafka\'s reason', async () => {
    const c = await connect();
    c.send(ApiKey.Metadata, 12, { topics: [], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
    await closedWithin(c, 2000);
    expect(suite.lines.some((l) => l.reason === 'Unexpected Kafka request of type METADATA during SASL handshake.')).to.equal(true);
    // After a v1 handshake only SaslAuthenticate may come.
    const d = await connect();
    await handshake(d, 'PLAIN');
    d.send(ApiKey.ApiVersions, 3, { clientSoftwareName: 't', clientSoftwareVersion: '1' });
    await closedWithin(d, 2000);
  });

  it('a failed SaslAuthenticate is answered after connection.failed.authentication.delay.ms, then closed', async () => {
    const c = await connect();
    await handshake(c, 'PLAIN');
    const started = Date.now();
    const r = await authenticate(c, plainClientMessage('mallory', 'guess'));
    const elapsed = Date.now() - started;
    expect(r.errorCode).to.equal(ErrorCode.SASL_AUTHENTICATION_FAILED);
    expect(r.errorMessage).to.equal('Authentication failed: Invalid username or password');
    expect(elapsed).to.be.at.least(280);
    await closedWithin(c, 2000);
    // Other clients are not delayed meanwhile: a good exchange on another connection is quick.
    const d = await connect();
    await handshake(d, 'PLAIN');
    const t0 = Date.now();
    expect((await authenticate(d, plainClientMessage('admin', 'admin-secret'))).errorCode).to.equal(ErrorCode.NONE);
    expect(Date.now() - t0).to.be.below(250);
  });

  it('OAUTHBEARER with an unsecured token through kafkajs', async () => {
    const token = unsecuredToken({ sub: 'alice', iat: nowSeconds(), exp: nowSeconds() + 3600, scope: 'kafka' });
    const admin = kafka(suite.broker, { mechanism: 'oauthbearer', oauthBearerProvider: async () => ({ value: token }) }).admin();
    await admin.connect();
    expect(await admin.listTopics()).to.be.an('array');
    await admin.disconnect();
  });

  it('OAUTHBEARER: an expired token gets the invalid_token challenge, then fails with it; the session lifetime is the token\'s', async () => {
    const c = await connect();
    await handshake(c, 'OAUTHBEARER');
    const expired = unsecuredToken({ sub: 'alice', exp: nowSeconds() - 60 });
    const challenge = await authenticate(c, oauthBearerClientMessage(expired));
    expect(challenge.errorCode).to.equal(ErrorCode.NONE);
    expect(challenge.authBytes.toString()).to.equal('{"status":"invalid_token"}');
    const failed = await authenticate(c, Buffer.from([1]));
    expect(failed.errorCode).to.equal(ErrorCode.SASL_AUTHENTICATION_FAILED);
    expect(failed.errorMessage).to.equal('{"status":"invalid_token"}');
    await closedWithin(c, 2000);

    const d = await connect();
    await handshake(d, 'OAUTHBEARER');
    const ok = await authenticate(d, oauthBearerClientMessage(unsecuredToken({ sub: 'alice', exp: nowSeconds() + 100 })));
    expect(ok.errorCode).to.equal(ErrorCode.NONE);
    expect(Number(ok.sessionLifetimeMs)).to.be.within(95_000, 100_000);

    const e = await connect();
    await handshake(e, 'OAUTHBEARER');
    const garbage = await authenticate(e, Buffer.from('not a gs2 header'));
    expect(garbage.errorMessage).to.equal('Authentication failed during authentication due to invalid credentials with SASL mechanism OAUTHBEARER');
  });
});

describe('SASL OAUTHBEARER with JWTs verified against a JWKS file', function () {
  this.timeout(30_000);
  let broker: RunningBroker;
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const other = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const claims = (extra: Record<string, unknown> = {}) => ({
    sub: 'svc-orders', iss: 'https://issuer.example', aud: 'fjord', iat: nowSeconds(), exp: nowSeconds() + 600, ...extra,
  });

  before(async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'jwks-'));
    const jwksFile = path.join(dir, 'jwks.json');
    writeFileSync(jwksFile, JSON.stringify({ keys: [{ ...publicKey.export({ format: 'jwk' }), kid: 'k1', use: 'sig', alg: 'RS256' }] }));
    ({ broker } = await saslBroker({
      'sasl.enabled.mechanisms': 'OAUTHBEARER',
      'listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config': 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;',
      'listener.name.sasl_plaintext.oauthbearer.sasl.server.callback.handler.class':
        'org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler',
      'sasl.oauthbearer.jwks.endpoint.url': pathToFileURL(jwksFile).href,
      'sasl.oauthbearer.expected.audience': 'fjord',
      'sasl.oauthbearer.expected.issuer': 'https://issuer.example',
      'connection.failed.authentication.delay.ms': '0',
    }));
  });
  after(async () => {
    await broker.close();
  });

  async function tryToken(token: string): Promise<SaslAuthenticateResponse> {
    const c = await RawClient.connect(broker.port);
    try {
      await handshake(c, 'OAUTHBEARER');
      return await authenticate(c, oauthBearerClientMessage(token));
    } finally {
      c.close();
    }
  }

  it('a signed RS256 token works through kafkajs', async () => {
    const token = signedToken(privateKey, 'k1', claims());
    const producer = kafka(broker, { mechanism: 'oauthbearer', oauthBearerProvider: async () => ({ value: token }) }).producer();
    await producer.connect();
    await producer.send({ topic: 'sasl-jwt', messages: [{ value: 'x' }] });
    await producer.disconnect();
  });

  it('the token\'s exp bounds the session; wrong audience, wrong issuer, expired, foreign key and unsigned tokens are refused', async () => {
    const ok = await tryToken(signedToken(privateKey, 'k1', claims({ exp: nowSeconds() + 120 })));
    expect(ok.errorCode).to.equal(ErrorCode.NONE);
    expect(Number(ok.sessionLifetimeMs)).to.be.within(115_000, 120_000);
    for (const token of [
      signedToken(privateKey, 'k1', claims({ aud: 'someone-else' })),
      signedToken(privateKey, 'k1', claims({ iss: 'https://evil.example' })),
      signedToken(privateKey, 'k1', claims({ iat: nowSeconds() - 600, exp: nowSeconds() - 60 })),
      signedToken(other.privateKey, 'k1', claims()),
      unsecuredToken(claims()),
    ]) {
      const r = await tryToken(token);
      expect(r.authBytes.toString(), token).to.equal('{"status":"invalid_token"}');
    }
  });
});

describe('SASL re-authentication (KIP-368) and a stalled exchange', function () {
  this.timeout(30_000);
  const suite = withSaslBroker({
    'sasl.enabled.mechanisms': 'PLAIN',
    'listener.name.sasl_plaintext.plain.sasl.jaas.config': PLAIN_JAAS,
    'listener.name.sasl_plaintext.plain.connections.max.reauth.ms': '1500',
    'connections.max.idle.ms': '2000',
    'connection.failed.authentication.delay.ms': '0',
  }, 'debug');
  const { connect } = suite;

  it('kafkajs re-authenticates before its session expires and keeps producing', async () => {
    const producer = kafka(suite.broker, { mechanism: 'plain', username: 'alice', password: 'alice-secret' }, { reauthenticationThreshold: 1000 }).producer();
    await producer.connect();
    const until = Date.now() + 4000;
    let sent = 0;
    while (Date.now() < until) {
      await producer.send({ topic: 'sasl-reauth', messages: [{ value: String(sent++) }] });
      await new Promise((r) => setTimeout(r, 250));
    }
    await producer.disconnect();
    expect(sent).to.be.greaterThan(10);
    // Sessions of 1.5 s over 4 s: each of its connections re-authenticated, none was closed as expired.
    expect(suite.lines.filter((l) => l.msg === 'SASL authentication complete' && l.reauthentication === true).length).to.be.at.least(2);
    expect(suite.lines.some((l) => String(l.reason).includes('expired'))).to.equal(false);
  });

  it('a raw client re-authenticates and keeps working; one that does not is closed at its next request', async () => {
    const c = await connect();
    await handshake(c, 'PLAIN');
    expect((await authenticate(c, plainClientMessage('alice', 'alice-secret'))).sessionLifetimeMs).to.equal(1500n);
    const stale = await connect();
    await handshake(stale, 'PLAIN');
    await authenticate(stale, plainClientMessage('alice', 'alice-secret'));
    await new Promise((r) => setTimeout(r, 1600));
    // Re-authenticating with the same principal renews the session.
    expect((await handshake(c, 'PLAIN')).errorCode).to.equal(ErrorCode.NONE);
    expect((await authenticate(c, plainClientMessage('alice', 'alice-secret'))).errorCode).to.equal(ErrorCode.NONE);
    expect((await metadata(c)).brokers).to.have.length(1);
    // The other one's session is over.
    stale.send(ApiKey.Metadata, 12, { topics: [], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
    await closedWithin(stale, 2000);
  });

  it('a re-authentication cannot change the principal', async () => {
    const c = await connect();
    await handshake(c, 'PLAIN');
    await authenticate(c, plainClientMessage('alice', 'alice-secret'));
    await handshake(c, 'PLAIN');
    const r = await authenticate(c, plainClientMessage('admin', 'admin-secret'));
    expect(r.errorCode).to.equal(ErrorCode.SASL_AUTHENTICATION_FAILED);
    expect(r.errorMessage).to.equal('Cannot change principals during re-authentication from User.alice: User.admin');
    await closedWithin(c, 2000);
  });

  it('a client that stalls its exchange (bytes trickling in) is disconnected after min(connections.max.idle.ms, 30 s)', async () => {
    const c = await connect();
    await handshake(c, 'PLAIN');
    // A SaslAuthenticate frame that never completes: a byte every 300 ms keeps it from being idle.
    const frame = RawClient.frame(ApiKey.SaslAuthenticate, 2, { authBytes: plainClientMessage('alice', 'alice-secret') }, 9);
    const started = Date.now();
    let i = 0;
    const trickle = setInterval(() => { if (!c.ended && i < frame.length - 1) c.sendBytes(frame.subarray(i, ++i)); }, 300);
    try {
      const ms = await closedWithin(c, 5000, started);
      expect(ms).to.be.within(1500, 3500);
    } finally {
      clearInterval(trickle);
    }
  });
});
