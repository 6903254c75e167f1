// The connection layer with handlers made for the test (a Listener over a Router of fakes): a
// request that throws or whose response the encoder rejects, request ordering on one connection,
// and the limits that pause reading (in-flight cap, queued.max.requests, a peer that never reads).
import { ClientQuotas } from '../../src/cluster/client-quota-manager';
import { ALLOW_EVERYTHING } from '../../src/security/acl';
import { expect } from 'chai';
import { Writable } from 'node:stream';
import { createLogger } from '../../src/common/logger';
import { ApiKey } from '../../src/protocol/generated';
import type { FindCoordinatorResponse } from '../../src/protocol/generated/FindCoordinatorResponse';
import { Listener, type ListenerLimits } from '../../src/net/listener';
import { Router } from '../../src/net/router';
import type { ApiHandler } from '../../src/handlers/handler';
import { RawClient } from '../helpers/raw-client';
import { BrokerMetrics } from '../../src/metrics/broker-metrics';

/** What a FindCoordinator v0-3 answer carries; `host` is how a test tells requests apart. */
function coordinator(host: string): FindCoordinatorResponse {
  return { throttleTimeMs: 0, errorCode: 0, errorMessage: null, nodeId: 1, host, port: 9092, coordinators: [] };
}

const LIMITS: ListenerLimits = {
  maxRequestBytes: 1 << 20, idleMs: 60_000, maxInFlight: 100, maxConnections: 10_000, maxConnectionsPerIp: 10_000,
  maxConnectionsPerIpOverrides: new Map(), maxQueuedRequests: 500, maxQueuedBytes: -1, handshakeTimeoutMs: 10_000,
};

/** A listener on a free port serving `handlers`, with its log lines collected. */
async function serve(handlers: ApiHandler[], limits: Partial<ListenerLimits> = {}) {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split('\n')) if (l) lines.push(JSON.parse(l));
      done();
    },
  });
  const listener = new Listener(new Router(handlers), { ...LIMITS, ...limits }, createLogger({ level: 'debug', format: 'json', destination }),
    { listenerName: 'PLAINTEXT', securityProtocol: 'PLAINTEXT', authorizer: ALLOW_EVERYTHING, quotas: new ClientQuotas({ samples: 11, windowMs: 1000 }, { samples: 11, windowMs: 1000 }, () => new Map()),
      metrics: new BrokerMetrics(0) });
  const port = await listener.listen('127.0.0.1', 0);
  return { listener, port, lines };
}

function findCoordinator(version: number, key: string, correlationId: number): Buffer {
  const body = version >= 4 ? { keyType: 0, coordinatorKeys: [key] } : { key, keyType: 0, coordinatorKeys: [] };
  return RawClient.frame(ApiKey.FindCoordinator, version, body, correlationId);
}

/** A FindCoordinator handler whose answer is a test's to give: `answer(key)` per request. */
function fakeFindCoordinator(answer: (key: string, version: number) => FindCoordinatorResponse | Promise<FindCoordinatorResponse>): ApiHandler {
  return {
    apiKey: ApiKey.FindCoordinator, name: 'FindCoordinator', minVersion: 0, maxVersion: 4,
    handle: (req: { key: string; coordinatorKeys: string[] }, ctx) => answer(ctx.apiVersion >= 4 ? req.coordinatorKeys[0] : req.key, ctx.apiVersion),
  } as ApiHandler;
}

/** A Produce handler answering `produced` once `release` is called for its correlation id. */
function fakeProduce(started: number[], release: Map<number, () => void>): ApiHandler {
  return {
    apiKey: ApiKey.Produce, name: 'Produce', minVersion: 3, maxVersion: 11,
    handle: (_req, ctx) => {
      started.push(ctx.correlationId);
      return new Promise((resolve) => release.set(ctx.correlationId, () => resolve({ responses: [], throttleTimeMs: 0 })));
    },
  };
}

function produce(correlationId: number): Buffer {
  return RawClient.frame(ApiKey.Produce, 9, { transactionalId: null, acks: 1, timeoutMs: 1000, topicData: [] }, correlationId);
}

const tick = (ms = 20) => new Promise((r) => setTimeout(r, ms));

describe('connection guard and ordering', function () {
  this.timeout(20000);

  describe('a request whose handling fails', () => {
    // v4 carries errors per coordinator: a top-level error there is a field the encoder refuses.
    const rejectedByEncoder = (key: string) => (key === 'bad' ? { ...coordinator('h'), errorCode: 15 } : coordinator(key));
    const cases: [string, ApiHandler][] = [
      ['a response the encoder rejects', fakeFindCoordinator(rejectedByEncoder)],
      ['a handler that throws', fakeFindCoordinator((key) => {
        if (key === 'bad') throw new TypeError('handler bug');
        return coordinator(key);
      })],
      ['a handler whose promise rejects', fakeFindCoordinator(async (key) => {
        await tick(5);
        if (key === 'bad') throw new TypeError('async handler bug');
        return coordinator(key);
      })],
    ];
    for (const [what, handler] of cases) {
      it(`closes that connection on ${what}, logs why, and keeps serving others`, async () => {
        const { listener, port, lines } = await serve([handler]);
        try {
          const other = await RawClient.connect(port);
          const victim = await RawClient.connect(port);
          victim.sendBytes(findCoordinator(4, 'bad', 7));
          await victim.closed;
          expect(victim.ended, 'closed without an answer').to.equal(true);
          const failure = lines.find((l) => l.level === 50 && l.api === 'FindCoordinator');
          expect(failure, 'an error-level line').to.not.equal(undefined);
          expect(failure).to.include({ apiVersion: 4 });
          expect(lines.some((l) => l.reason && String(l.reason).startsWith('FindCoordinator v4 request failed:'))).to.equal(true);
          // The connection opened before and one opened after are both served.
          const before = await other.request<FindCoordinatorResponse>(ApiKey.FindCoordinator, 1, { key: 'fine', keyType: 0 });
          expect(before.host).to.equal('fine');
          const after = await RawClient.connect(port);
          expect((await after.request<FindCoordinatorResponse>(ApiKey.FindCoordinator, 1, { key: 'again', keyType: 0 })).host).to.equal('again');
          other.close();
          after.close();
        } finally {
          await listener.close();
        }
      });
    }
  });

  it('starts a request only once the requests before it on its connection are answered', async () => {
    const log: string[] = [];
    const slow = fakeFindCoordinator(async (key) => {
      log.push(`start ${key}`);
      await tick(key === 'first' ? 60 : 1);
      log.push(`end ${key}`);
      return coordinator(key);
    });
    const { listener, port } = await serve([slow]);
    try {
      const c = await RawClient.connect(port);
      c.sendBytes(Buffer.concat([findCoordinator(1, 'first', 1), findCoordinator(1, 'second', 2), findCoordinator(1, 'third', 3)]));
      for (const [id, key] of [[1, 'first'], [2, 'second'], [3, 'third']] as const) {
        const r = await c.receive<FindCoordinatorResponse>(ApiKey.FindCoordinator, 1);
        expect([r.correlationId, r.body.host]).to.deep.equal([id, key]);
      }
      expect(log).to.deep.equal(['start first', 'end first', 'start second', 'end second', 'start third', 'end third']);
      c.close();
    } finally {
      await listener.close();
    }
  });

  it('overlaps consecutive Produce requests, but not across another request, and answers in order', async () => {
    const started: number[] = [];
    const release = new Map<number, () => void>();
    const other = fakeFindCoordinator((key) => {
      started.push(Number(key));
      return coordinator(key);
    });
    const { listener, port } = await serve([fakeProduce(started, release), other]);
    try {
      const c = await RawClient.connect(port);
      c.sendBytes(Buffer.concat([produce(1), produce(2), produce(3), findCoordinator(1, '4', 4), produce(5)]));
      await tick(50);
      expect(started, 'the three Produce requests run together').to.deep.equal([1, 2, 3]);
      release.get(2)!();
      release.get(3)!();
      await tick(50);
      expect(started, 'request 4 waits for request 1').to.deep.equal([1, 2, 3]);
      release.get(1)!();
      await tick(50);
      expect(started).to.deep.equal([1, 2, 3, 4, 5]);
      release.get(5)!();
      const order = [];
      for (let i = 0; i < 5; i++) order.push((await c.receive(i === 3 ? ApiKey.FindCoordinator : ApiKey.Produce, i === 3 ? 1 : 9)).correlationId);
      expect(order).to.deep.equal([1, 2, 3, 4, 5]);
      c.close();
    } finally {
      await listener.close();
    }
  });

  it('reads at most maxInFlight requests of one connection, and queued.max.requests broker-wide', async () => {
    const started: number[] = [];
    const release = new Map<number, () => void>();
    const blocked = fakeFindCoordinator((key) => new Promise((resolve) => {
      started.push(Number(key));
      release.set(Number(key), () => resolve(coordinator(key)));
    }));
    const { listener, port } = await serve([blocked], { maxInFlight: 10, maxQueuedRequests: 15 });
    try {
      const a = await RawClient.connect(port);
      a.sendBytes(Buffer.concat(Array.from({ length: 30 }, (_, i) => findCoordinator(1, String(i), i))));
      await tick(50);
      expect(listener.budget.queuedRequests, 'one runs, nine wait, the rest stay unread').to.equal(9);
      const b = await RawClient.connect(port);
      b.sendBytes(Buffer.concat(Array.from({ length: 10 }, (_, i) => findCoordinator(1, String(100 + i), 100 + i))));
      await tick(50);
      expect(listener.budget.queuedRequests, 'b reads until the broker-wide queue is full').to.equal(15);
      const c = await RawClient.connect(port);
      c.sendBytes(findCoordinator(1, '200', 200));
      await tick(50);
      expect(started, 'c is not read while the queue is full').to.not.include(200);
      // Answering a's requests one by one frees the queue: everything is eventually answered.
      for (let i = 0; i < 30; i++) {
        while (!release.has(i)) await tick(5);
        release.get(i)!();
        expect((await a.receive<FindCoordinatorResponse>(ApiKey.FindCoordinator, 1)).correlationId).to.equal(i);
      }
      await tick(20);
      expect(started).to.include(200);
      release.get(200)!();
      expect((await c.receive(ApiKey.FindCoordinator, 1)).correlationId).to.equal(200);
      for (let i = 100; i < 110; i++) {
        while (!release.has(i)) await tick(5);
        release.get(i)!();
      }
      for (let i = 100; i < 110; i++) expect((await b.receive(ApiKey.FindCoordinator, 1)).correlationId).to.equal(i);
      expect(listener.budget.queuedRequests).to.equal(0);
      a.close(); b.close(); c.close();
    } finally {
      await listener.close();
    }
  });

  it('starts no new handler while a peer that does not read has responses waiting', async () => {
    let handled = 0;
    const big = 'x'.repeat(30_000);
    const bulky = fakeFindCoordinator((key) => {
      handled++;
      return coordinator(`${key}${big}`);
    });
    const { listener, port } = await serve([bulky], { maxInFlight: 1000 });
    try {
      const c = await RawClient.connect(port);
      c.socket.pause();
      const count = 1500; // 1,500 x 30 kB: 45 MB of responses, far more than the socket buffers and the high water mark
      c.sendBytes(Buffer.concat(Array.from({ length: count }, (_, i) => findCoordinator(1, String(i), i))));
      await tick(300);
      const whilePaused = handled;
      expect(whilePaused, 'handlers run only while the responses drain').to.be.below(count / 2);
      c.socket.resume();
      for (let i = 0; i < count; i++) expect((await c.receive(ApiKey.FindCoordinator, 1)).correlationId).to.equal(i);
      expect(handled).to.equal(count);
      c.close();
    } finally {
      await listener.close();
    }
  });
});
