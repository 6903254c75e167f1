// The inter-broker client (src/net/broker-client.ts) against a real broker started in-process, through
// a proxy that splits or coalesces the broker's bytes, and against fake peers that answer ApiVersions
// as an old broker would, or never answer.
import { expect } from 'chai';
import * as net from 'node:net';
import { ApiKey, apiSpecs, encodeResponseFrame, readRequestHeader, type RequestHeader } from '../../src/protocol/generated';
import { Reader, Writer, UnsupportedVersionError } from '../../src/protocol/primitives';
import type { MetadataResponse } from '../../src/protocol/generated/MetadataResponse';
import { ErrorCode } from '../../src/common/errors';
import { buildBatchSync, decodeRecords } from '../../src/records/records';
import { startBroker } from '../../src/broker';
import {
  BrokerClient, BrokerConnectionError, RequestTimeoutError, type BrokerClientOptions,
} from '../../src/net/broker-client';
import { withBroker } from '../helpers/broker';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy';
import { rejection } from '../helpers/rejection';

const REQUEST_TIMEOUT_MS = 3000;

function options(port: number, extra: Partial<BrokerClientOptions> = {}): BrokerClientOptions {
  return { host: '127.0.0.1', port, clientId: 'broker-1', connectTimeoutMs: 2000, requestTimeoutMs: REQUEST_TIMEOUT_MS, ...extra };
}

/** Rejects with what `promise` rejected with; fails the test if it resolved. */
function metadataOf(topics: string[]) {
  return { topics: topics.map((name) => ({ name })), allowAutoTopicCreation: false, includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false };
}

describe('BrokerClient (the inter-broker client)', function () {
  this.timeout(20000);
  const broker = withBroker();
  const port = () => broker.current().port;
  const clients: BrokerClient[] = [];
  async function connect(p = port(), extra: Partial<BrokerClientOptions> = {}): Promise<BrokerClient> {
    const c = await BrokerClient.connect(options(p, extra));
    clients.push(c);
    return c;
  }
  afterEach(() => {
    for (const c of clients.splice(0)) c.close();
  });

  it('negotiates versions: the peer\'s ranges, and the highest version both sides support', async () => {
    const c = await connect();
    expect(c.peerVersionRange(ApiKey.Metadata)).to.deep.equal({ minVersion: 0, maxVersion: 13 });
    expect(c.peerVersionRange(ApiKey.ApiVersions)).to.deep.equal({ minVersion: 0, maxVersion: 5 });
    expect(c.usableVersion(ApiKey.Metadata)).to.equal(13);
    expect(c.usableVersion(ApiKey.Fetch)).to.equal(18);
    // The codec's latest InitProducerId version (6) is marked unstable, as in Kafka 4.4: we do not send it.
    expect(apiSpecs[ApiKey.InitProducerId].latestVersionUnstable).to.equal(true);
    expect(apiSpecs[ApiKey.InitProducerId].maxVersion).to.equal(6);
    expect(c.usableVersion(ApiKey.InitProducerId)).to.equal(5);
    expect(apiSpecs[ApiKey.EndTxn].latestVersionUnstable).to.equal(false);
    expect(c.usableVersion(ApiKey.EndTxn)).to.equal(5);
    // An API the broker does not serve has no usable version; the connection is not affected.
    expect(c.peerVersionRange(ApiKey.DescribeDelegationToken)).to.equal(undefined);
    expect(() => c.usableVersion(ApiKey.DescribeDelegationToken)).to.throw(UnsupportedVersionError, /DescribeDelegationToken/);
    const tokens = await rejection(c.request(ApiKey.DescribeDelegationToken, { owners: null }));
    expect(tokens).to.be.instanceOf(UnsupportedVersionError);
    // A version the codec knows and the peer does not serve.
    const outOfRange = await rejection(c.request(ApiKey.InitProducerId, { transactionalId: null, transactionTimeoutMs: 1000 }, { version: 6 }));
    expect(outOfRange).to.be.instanceOf(UnsupportedVersionError);
    const acksZero = await rejection(c.request(ApiKey.Produce, { acks: 0, timeoutMs: 1000, topicData: [] }));
    expect(acksZero.message).to.match(/acks=0/);
    expect(c.isClosed).to.equal(false);
    const res = await c.request(ApiKey.Metadata, metadataOf([]), { version: 4 });
    expect(res.brokers.map((b) => b.port)).to.deep.equal([port()]);
  });

  it('creates a topic, reads its metadata, produces records and fetches them back', async () => {
    const c = await connect();
    const created = await c.request(ApiKey.CreateTopics, {
      topics: [{ name: 'client-topic', numPartitions: 2, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 5000,
    });
    expect(created.topics.map((t) => [t.name, t.errorCode])).to.deep.equal([['client-topic', ErrorCode.NONE]]);
    const topicId = created.topics[0].topicId;

    const metadata = await c.request(ApiKey.Metadata, metadataOf(['client-topic']));
    const topic = metadata.topics[0];
    expect([topic.errorCode, topic.name, topic.topicId]).to.deep.equal([ErrorCode.NONE, 'client-topic', topicId]);
    const nodeId = metadata.brokers[0].nodeId;
    expect(topic.partitions.map((p) => [p.partitionIndex, p.leaderId])).to.deep.equal([[0, nodeId], [1, nodeId]]);

    const records = buildBatchSync({ records: ['a', 'b', 'c'].map((value, i) => ({ key: `k${i}`, value })) });
    const produced = await c.request(ApiKey.Produce, {
      acks: -1, timeoutMs: 5000, topicData: [{ topicId, partitionData: [{ index: 1, records }] }],
    });
    // Produce v13 names the topic by id, both ways.
    expect(produced.responses[0].topicId).to.equal(topicId);
    expect(produced.responses[0].partitionResponses[0]).to.include({ index: 1, errorCode: ErrorCode.NONE, baseOffset: 0n });

    const fetched = await c.request(ApiKey.Fetch, {
      replicaId: -1, maxWaitMs: 0, minBytes: 1, maxBytes: 1 << 20, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
      topics: [{ topic: 'client-topic', topicId, partitions: [{ partition: 1, fetchOffset: 0n, partitionMaxBytes: 1 << 20 }] }],
      forgottenTopicsData: [], rackId: '',
    });
    const partition = fetched.responses[0].partitions[0];
    expect([partition.errorCode, partition.highWatermark]).to.deep.equal([ErrorCode.NONE, 3n]);
    const decoded = await decodeRecords(partition.records!);
    expect(decoded.map((r) => [r.offset, r.key!.toString(), r.value!.toString()])).to.deep.equal([[0, 'k0', 'a'], [1, 'k1', 'b'], [2, 'k2', 'c']]);
  });

  /** 20 requests sent at once, each answer naming what its request asked: answers are matched, in order. */
  async function pipelineTwenty(c: BrokerClient): Promise<void> {
    const answered: number[] = [];
    const requests = Array.from({ length: 20 }, (_, i) => {
      const response = i % 4 === 3
        ? c.request(ApiKey.ApiVersions, {}, { version: i % 3 }).then((r) => `ApiVersions ${r.errorCode} ${r.apiKeys.some((k) => k.apiKey === ApiKey.Fetch)}`)
        : c.request(ApiKey.Metadata, metadataOf([`missing-${i}`])).then((r) => `Metadata ${r.topics[0].name} ${r.topics[0].errorCode}`);
      return response.then((summary) => {
        answered.push(i);
        return summary;
      });
    });
    const summaries = await Promise.all(requests);
    expect(summaries).to.deep.equal(Array.from({ length: 20 }, (_, i) => (i % 4 === 3
      ? 'ApiVersions 0 true' : `Metadata missing-${i} ${ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}`)));
    expect(answered).to.deep.equal(Array.from({ length: 20 }, (_, i) => i));
    expect(c.isClosed).to.equal(false);
  }

  describe('through a proxy that reshapes the broker\'s bytes', () => {
    let proxy: TcpProxy;
    afterEach(async () => proxy.close());

    it('pipelines 20 requests on one connection, answered in order', async () => {
      proxy = await startTcpProxy(port(), 'passthrough');
      await pipelineTwenty(await connect(proxy.port));
    });

    it('reads responses that arrive byte by byte (every frame and size prefix split)', async () => {
      proxy = await startTcpProxy(port(), 'byte-by-byte');
      const c = await connect(proxy.port);
      const res = await c.request(ApiKey.Metadata, metadataOf(['nowhere']));
      expect(res.topics.map((t) => [t.name, t.errorCode])).to.deep.equal([['nowhere', ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]]);
      const [a, b] = await Promise.all([c.request(ApiKey.ApiVersions, {}), c.request(ApiKey.Metadata, metadataOf([]))]);
      expect([a.errorCode, b.brokers.length]).to.deep.equal([ErrorCode.NONE, 1]);
    });

    it('reads several responses that arrive coalesced in one read', async () => {
      proxy = await startTcpProxy(port(), 'coalesce');
      await pipelineTwenty(await connect(proxy.port));
    });

    it('fails a request unanswered within requestTimeoutMs, fails those behind it, and closes the connection', async () => {
      proxy = await startTcpProxy(port(), 'passthrough');
      const c = await connect(proxy.port, { requestTimeoutMs: 500 });
      proxy.mode = 'blackhole';
      const started = Date.now();
      const first = rejection(c.request(ApiKey.Metadata, metadataOf([])));
      await new Promise((resolve) => setTimeout(resolve, 100));
      const second = rejection(c.request(ApiKey.ApiVersions, {}));
      const timedOut = await first;
      expect(timedOut).to.be.instanceOf(RequestTimeoutError);
      expect(timedOut.message).to.match(/no response to Metadata v13 \(correlation id 1\) within 500 ms/);
      expect(Date.now() - started).to.be.within(450, 2000);
      const behind = await second;
      expect(behind).to.be.instanceOf(BrokerConnectionError).and.not.instanceOf(RequestTimeoutError);
      expect(behind.message).to.match(/request timed out/);
      expect(c.isClosed).to.equal(true);
      await waitFor(() => proxy.clientsClosed === 1);
      expect(await rejection(c.request(ApiKey.ApiVersions, {}))).to.be.instanceOf(BrokerConnectionError);
    });
  });

  it('closes the connection on a response larger than maxResponseBytes', async () => {
    const c = await connect(port(), { maxResponseBytes: 2048 });
    const created = await c.request(ApiKey.CreateTopics, { topics: [{ name: 'big', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }] });
    const records = buildBatchSync({ records: [{ value: 'x'.repeat(4000) }] });
    const topicId = created.topics[0].topicId;
    const produced = await c.request(ApiKey.Produce, { acks: 1, timeoutMs: 5000, topicData: [{ topicId, partitionData: [{ index: 0, records }] }] });
    expect(produced.responses[0].partitionResponses[0].errorCode).to.equal(ErrorCode.NONE);
    const err = await rejection(c.request(ApiKey.Fetch, {
      maxWaitMs: 0, minBytes: 1, topics: [{ topicId, partitions: [{ partition: 0, fetchOffset: 0n, partitionMaxBytes: 1 << 20 }] }], forgottenTopicsData: [],
    }));
    expect(err).to.be.instanceOf(BrokerConnectionError);
    expect(err.message).to.match(/response frame of \d+ bytes \(at most 2048\)/);
    expect(c.isClosed).to.equal(true);
  });

  it('fails every pending request when the broker closes the connection', async () => {
    const own = await startBroker({ logLevel: 'silent' });
    let ownClosed = false;
    try {
      const c = await connect(own.port);
      await c.request(ApiKey.CreateTopics, { topics: [{ name: 'idle', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }] });
      const topicId = own.broker.controller.topic('idle')?.id;
      // A long poll on an empty partition, and a request queued behind it on the connection.
      const longPoll = rejection(c.request(ApiKey.Fetch, {
        maxWaitMs: 15000, minBytes: 1, topics: [{ topicId, partitions: [{ partition: 0, fetchOffset: 0n, partitionMaxBytes: 1 << 20 }] }], forgottenTopicsData: [],
      }));
      const behind = rejection(c.request(ApiKey.Metadata, metadataOf([])));
      await new Promise((resolve) => setTimeout(resolve, 200));
      await own.close();
      ownClosed = true;
      for (const err of await Promise.all([longPoll, behind])) {
        expect(err).to.be.instanceOf(BrokerConnectionError).and.not.instanceOf(RequestTimeoutError);
        expect(err.message).to.match(/connection closed \((closed by the peer|socket error: .+)\) before the response to (Fetch|Metadata)/);
      }
      expect(c.isClosed).to.equal(true);
    } finally {
      if (!ownClosed) await own.close();
    }
  });

  it('fails to connect to a port nobody listens on', async () => {
    const closedPort = await freePort();
    const err = await rejection(BrokerClient.connect(options(closedPort)));
    expect(err).to.be.instanceOf(BrokerConnectionError);
    expect(err.message).to.match(/connection failed: .*ECONNREFUSED/);
  });

  describe('against fake peers', () => {
    let peer: FakePeer;
    afterEach(async () => peer.close());

    for (const [offered, retried] of [[2, 2], [null, 0]] as const) {
      it(`retries ApiVersions at v${retried} when v3 is answered with UNSUPPORTED_VERSION${offered === null ? ' and no range' : ''} (KIP-511)`, async () => {
        const versionsAsked: number[] = [];
        peer = await startFakePeer((header) => {
          if (header.requestApiKey !== ApiKey.ApiVersions) return null;
          versionsAsked.push(header.requestApiVersion);
          if (header.requestApiVersion === 3) { // answered in v0, as a broker that does not know v3 does
            const apiKeys = offered === null ? [] : [{ apiKey: ApiKey.ApiVersions, minVersion: 0, maxVersion: offered }];
            return [ApiKey.ApiVersions, 0, { errorCode: ErrorCode.UNSUPPORTED_VERSION, apiKeys }];
          }
          return [ApiKey.ApiVersions, header.requestApiVersion, { errorCode: ErrorCode.NONE, throttleTimeMs: 0, apiKeys: [
            { apiKey: ApiKey.ApiVersions, minVersion: 0, maxVersion: offered ?? 0 },
            { apiKey: ApiKey.Metadata, minVersion: 1, maxVersion: 9 },
          ] }];
        });
        const c = await connect(peer.port);
        expect(versionsAsked).to.deep.equal([3, retried]);
        expect(c.peerVersionRange(ApiKey.Metadata)).to.deep.equal({ minVersion: 1, maxVersion: 9 });
        expect(c.usableVersion(ApiKey.Metadata)).to.equal(9);
        expect(() => c.usableVersion(ApiKey.Fetch)).to.throw(UnsupportedVersionError);
      });
    }

    it('fails connect() when the peer accepts but never answers ApiVersions', async () => {
      peer = await startFakePeer(() => null);
      const started = Date.now();
      const err = await rejection(BrokerClient.connect(options(peer.port, { requestTimeoutMs: 400 })));
      expect(err).to.be.instanceOf(RequestTimeoutError);
      expect(err.message).to.match(/no response to ApiVersions v3 \(correlation id 0\) within 400 ms/);
      expect(Date.now() - started).to.be.within(350, 2000);
      await waitFor(() => peer.closedConnections === 1);
    });

    it('fails connect() when ApiVersions is answered with an error', async () => {
      peer = await startFakePeer(() => [ApiKey.ApiVersions, 3, { errorCode: ErrorCode.INVALID_REQUEST, apiKeys: [] }]);
      const err = await rejection(BrokerClient.connect(options(peer.port)));
      expect(err).to.be.instanceOf(BrokerConnectionError);
      expect(err.message).to.match(/answered ApiVersions with INVALID_REQUEST/);
    });

    it('closes the connection on a response whose correlation id is not the oldest request\'s', async () => {
      peer = await startFakePeer((header) => {
        if (header.requestApiKey === ApiKey.ApiVersions) {
          return [ApiKey.ApiVersions, 3, { errorCode: ErrorCode.NONE, apiKeys: [{ apiKey: ApiKey.Metadata, minVersion: 0, maxVersion: 12 }] }];
        }
        const answer: MetadataResponse = { brokers: [], topics: [] };
        return [ApiKey.Metadata, header.requestApiVersion, answer, header.correlationId + 1];
      });
      const c = await connect(peer.port);
      const [first, second] = await Promise.all([
        rejection(c.request(ApiKey.Metadata, metadataOf([]))), rejection(c.request(ApiKey.Metadata, metadataOf([]))),
      ]);
      expect(first.message).to.match(/undecodable response to Metadata v12 \(correlation id 1\): correlation id 2, expected 1/);
      expect(second).to.be.instanceOf(BrokerConnectionError);
      expect(c.isClosed).to.equal(true);
    });
  });
});

async function waitFor(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

/** An answer: API key, version to encode at, body, and optionally a correlation id other than the request's. */
type FakeAnswer = readonly [ApiKey, number, unknown, number?];

interface FakePeer {
  readonly port: number;
  readonly closedConnections: number;
  close(): Promise<void>;
}

/** A server that reads request frames and answers each as `answer` says (null: never). */
async function startFakePeer(answer: (header: RequestHeader) => FakeAnswer | null): Promise<FakePeer> {
  const sockets = new Set<net.Socket>();
  let closedConnections = 0;
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => closedConnections++);
    let input = Buffer.alloc(0);
    socket.on('data', (bytes) => {
      input = Buffer.concat([input, bytes]);
      while (input.length >= 4 && input.length >= 4 + input.readInt32BE(0)) {
        const header = readRequestHeader(new Reader(input.subarray(4, 4 + input.readInt32BE(0))));
        input = input.subarray(4 + input.readInt32BE(0));
        const a = answer(header);
        if (a === null) continue;
        const [apiKey, version, body, correlationId = header.correlationId] = a;
        for (const chunk of encodeResponseFrame(new Writer(), apiKey, version, correlationId, body as never)) socket.write(chunk);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    get closedConnections() { return closedConnections; },
    close: () => new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    }),
  };
}
