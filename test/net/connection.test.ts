import { expect } from 'chai';
import { ApiKey } from '../../src/protocol/generated';
import type { ApiVersionsResponse } from '../../src/protocol/generated/ApiVersionsResponse';
import type { MetadataResponse } from '../../src/protocol/generated/MetadataResponse';
import { ErrorCode } from '../../src/common/errors';
import { RawClient } from '../helpers/raw-client';
import { withBroker } from '../helpers/broker';

describe('connection handling', function () {
  this.timeout(20000);
  const broker = withBroker({ config: { 'socket.request.max.bytes': '65536', 'connections.max.idle.ms': '1500' } });
  const port = () => broker.current().port;

  /** Proves the broker still answers a well-behaved client. */
  async function stillServing(): Promise<void> {
    const c = await RawClient.connect(port());
    const res = await c.request<ApiVersionsResponse>(ApiKey.ApiVersions, 3, { clientSoftwareName: 't', clientSoftwareVersion: '1' });
    expect(res.errorCode).to.equal(ErrorCode.NONE);
    c.close();
  }

  it('answers ApiVersions at every version with exactly the served APIs', async () => {
    const c = await RawClient.connect(port());
    for (let v = 0; v <= 5; v++) {
      const res = await c.request<ApiVersionsResponse>(ApiKey.ApiVersions, v, { clientSoftwareName: 'test', clientSoftwareVersion: '1.0' });
      expect(res.errorCode).to.equal(ErrorCode.NONE);
      const served = new Map(res.apiKeys.map((k) => [k.apiKey, [k.minVersion, k.maxVersion]]));
      expect(served.get(ApiKey.Metadata)).to.deep.equal([0, 13]);
      expect(served.get(ApiKey.ApiVersions)).to.deep.equal([0, 5]);
      expect(served.get(ApiKey.CreateTopics)).to.deep.equal([0, 7]);
      expect(served.get(ApiKey.Produce), 'v0 advertised for librdkafka, as Kafka 4 does').to.deep.equal([0, 13]);
      expect(served.get(ApiKey.JoinGroup)).to.deep.equal([0, 9]);
      expect(served.get(ApiKey.EndTxn)).to.deep.equal([0, 5]);
      expect(served.get(ApiKey.DescribeAcls), 'answered SECURITY_DISABLED without an authorizer, as Kafka does').to.deep.equal([0, 3]);
      expect(served.get(ApiKey.DescribeClientQuotas)).to.deep.equal([0, 1]);
    }
    c.close();
  });

  it('answers an unknown ApiVersions version with UNSUPPORTED_VERSION in the v0 format (KIP-511)', async () => {
    const c = await RawClient.connect(port());
    const frame = RawClient.frame(ApiKey.ApiVersions, 3, { clientSoftwareName: 'x', clientSoftwareVersion: '1' }, 77);
    frame.writeInt16BE(99, 6); // the version field of the header
    c.sendBytes(frame);
    const { correlationId, body } = await c.receive<ApiVersionsResponse>(ApiKey.ApiVersions, 0);
    expect(correlationId).to.equal(77);
    expect(body.errorCode).to.equal(ErrorCode.UNSUPPORTED_VERSION);
    expect(body.apiKeys.find((k) => k.apiKey === ApiKey.ApiVersions)).to.include({ minVersion: 0, maxVersion: 5 });
    // The connection stays open: the client retries with a version we serve.
    const retry = await c.request<ApiVersionsResponse>(ApiKey.ApiVersions, 0, {});
    expect(retry.errorCode).to.equal(ErrorCode.NONE);
    c.close();
  });

  it('answers pipelined requests in request order', async () => {
    const c = await RawClient.connect(port());
    const frames = [
      RawClient.frame(ApiKey.Metadata, 12, { topics: null, includeTopicAuthorizedOperations: false }, 10),
      RawClient.frame(ApiKey.ApiVersions, 2, {}, 11),
      RawClient.frame(ApiKey.Metadata, 1, { topics: [], includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false }, 12),
    ];
    c.sendBytes(Buffer.concat(frames));
    expect((await c.receive<MetadataResponse>(ApiKey.Metadata, 12)).correlationId).to.equal(10);
    expect((await c.receive<ApiVersionsResponse>(ApiKey.ApiVersions, 2)).correlationId).to.equal(11);
    expect((await c.receive<MetadataResponse>(ApiKey.Metadata, 1)).correlationId).to.equal(12);
    c.close();
  });

  it('reads a request split into single bytes', async () => {
    const c = await RawClient.connect(port());
    const frame = RawClient.frame(ApiKey.ApiVersions, 1, {}, 5);
    for (const byte of frame) {
      c.sendBytes(Buffer.from([byte]));
      await new Promise((r) => setImmediate(r));
    }
    expect((await c.receive<ApiVersionsResponse>(ApiKey.ApiVersions, 1)).correlationId).to.equal(5);
    c.close();
  });

  const hostile: [string, () => Buffer][] = [
    ['a frame over socket.request.max.bytes', () => int32(65537)],
    ['a negative size', () => int32(-5)],
    ['a zero size', () => int32(0)],
    ['a frame shorter than a request header', () => Buffer.concat([int32(3), Buffer.from([0, 18, 0])])],
    ['an unknown API key', () => withHeader(999, 0, Buffer.alloc(0))],
    ['an unsupported version', () => withHeader(ApiKey.Metadata, 13, Buffer.alloc(0))],
    ['a truncated body', truncatedFrame],
    ['an array length larger than the frame', () => withHeader(ApiKey.Metadata, 1, int32(0x7fffffff))],
    ['a string length past the end', () => withHeader(ApiKey.Metadata, 1, Buffer.concat([int32(1), Buffer.from([0x7f, 0xff])]))],
  ];
  for (const [what, bytes] of hostile) {
    it(`closes the connection on ${what} and keeps serving others`, async () => {
      const c = await RawClient.connect(port());
      c.sendBytes(bytes());
      await c.closed;
      await stillServing();
    });
  }

  it('is not stalled by a half-sent frame on another connection', async () => {
    const stuck = await RawClient.connect(port());
    stuck.sendBytes(RawClient.frame(ApiKey.ApiVersions, 1, {}, 1).subarray(0, 7));
    await stillServing();
    stuck.close();
  });

  it('serves a client while hundreds of idle connections are open', async () => {
    const idle = await Promise.all(Array.from({ length: 300 }, () => RawClient.connect(port())));
    await stillServing();
    for (const c of idle) c.close();
  });

  it('closes connections idle for connections.max.idle.ms', async () => {
    const c = await RawClient.connect(port());
    const started = Date.now();
    await c.closed;
    expect(Date.now() - started).to.be.within(1000, 6000);
  });
});

function int32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
}

/** A frame with a v1 request header (no client id) and the given body bytes. */
function withHeader(apiKey: number, version: number, body: Buffer): Buffer {
  const header = Buffer.alloc(10);
  header.writeInt16BE(apiKey, 0);
  header.writeInt16BE(version, 2);
  header.writeInt32BE(1, 4);
  header.writeInt16BE(-1, 8);
  return Buffer.concat([int32(header.length + body.length), header, body]);
}

/** A Metadata frame whose declared size matches, but whose topic name is cut short. */
function truncatedFrame(): Buffer {
  const full = RawClient.frame(ApiKey.Metadata, 1, { topics: [{ name: 'a-long-topic-name' }] }, 1);
  const cut = full.subarray(0, full.length - 5);
  const out = Buffer.from(cut);
  out.writeInt32BE(cut.length - 4, 0);
  return out;
}
