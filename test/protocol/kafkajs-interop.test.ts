/**
 * Cross-checks the generated codecs against an independent implementation:
 * kafkajs's hand-written protocol encoders/decoders (non-flexible versions
 * only, which is what kafkajs speaks). Requests built by kafkajs are decoded
 * by us; responses encoded by us are decoded by kafkajs.
 */
import { expect } from 'chai';
import {
  ApiKey,
  ApiRequestMap,
  ApiResponseMap,
  apiSpecs,
  encodeResponseFrame,
  readRequestHeader,
  requestHeaderVersion,
  responseHeaderVersion,
} from '../../src/protocol/generated';
import { Reader, Writer } from '../../src/protocol/primitives';

interface KafkajsRequest {
  apiKey: number;
  apiVersion: number;
  encode(): Promise<unknown>;
}
interface KafkajsResponse {
  decode(payload: Buffer): Promise<Record<string, unknown>>;
}
type RequestBuilder = (args: Record<string, unknown>) => KafkajsRequest;

function kjs<T>(module: string): T {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require(`kafkajs/src/protocol/${module}`) as T;
}

const createRequest = kjs<(a: { correlationId: number; clientId: string; request: KafkajsRequest }) => Promise<{ buffer: Buffer }>>('request');

/** Builds a kafkajs request frame and decodes it with our codecs. */
async function decodeKafkajsRequest<K extends ApiKey>(
  apiKey: K,
  module: string,
  args: Record<string, unknown>,
): Promise<{ body: ApiRequestMap[K]; version: number; clientId: string | null | undefined }> {
  const req = kjs<RequestBuilder>(`requests/${module}/request`)(args);
  expect(req.apiKey).to.equal(apiKey);
  const frame = (await createRequest({ correlationId: 42, clientId: 'kjs-client', request: req })).buffer;
  const r = new Reader(frame);
  expect(r.int32()).to.equal(frame.length - 4);
  const header = readRequestHeader(r);
  expect(header.requestApiKey).to.equal(apiKey);
  expect(header.correlationId).to.equal(42);
  expect(requestHeaderVersion(apiKey, req.apiVersion)).to.equal(1);
  const body = apiSpecs[apiKey].decodeRequest(r, header.requestApiVersion) as ApiRequestMap[K];
  expect(r.remaining(), 'unread request bytes').to.equal(0);
  return { body, version: header.requestApiVersion, clientId: header.clientId };
}

/** Encodes a response frame with our codecs and decodes it with kafkajs. */
async function kafkajsDecodeResponse<K extends ApiKey>(
  apiKey: K,
  version: number,
  module: string,
  body: ApiResponseMap[K],
): Promise<Record<string, unknown>> {
  const w = new Writer(64);
  const frame = Buffer.concat(encodeResponseFrame(w, apiKey, version, 7, body));
  expect(responseHeaderVersion(apiKey, version)).to.equal(0);
  expect(frame.readInt32BE(0)).to.equal(frame.length - 4);
  expect(frame.readInt32BE(4)).to.equal(7);
  const response = kjs<KafkajsResponse>(`requests/${module}/response`);
  return response.decode(frame.subarray(8));
}

describe('generated codecs vs kafkajs (independent implementation)', () => {
  it('Metadata v6 request and response', async () => {
    const { body, clientId } = await decodeKafkajsRequest(ApiKey.Metadata, 'metadata/v6', { topics: ['a', 'bb'], allowAutoTopicCreation: false });
    expect(clientId).to.equal('kjs-client');
    expect(body.topics!.map((t) => t.name)).to.deep.equal(['a', 'bb']);
    expect(body.allowAutoTopicCreation).to.equal(false);

    const decoded = await kafkajsDecodeResponse(ApiKey.Metadata, 6, 'metadata/v6', {
      throttleTimeMs: 3,
      brokers: [{ nodeId: 1, host: 'localhost', port: 9092, rack: null }],
      clusterId: 'cluster-x',
      controllerId: 1,
      topics: [
        {
          errorCode: 0,
          name: 'a',
          isInternal: false,
          partitions: [{ errorCode: 0, partitionIndex: 0, leaderId: 1, replicaNodes: [1], isrNodes: [1], offlineReplicas: [] }],
        },
      ],
    });
    expect(decoded.brokers).to.deep.equal([{ nodeId: 1, host: 'localhost', port: 9092, rack: null }]);
    expect(decoded.clusterId).to.equal('cluster-x');
    expect(decoded.controllerId).to.equal(1);
    const topics = decoded.topicMetadata as { topic: string; partitionMetadata: { leader: number; replicas: number[] }[] }[];
    expect(topics[0].topic).to.equal('a');
    expect(topics[0].partitionMetadata[0].leader).to.equal(1);
    expect(topics[0].partitionMetadata[0].replicas).to.deep.equal([1]);
  });

  it('ApiVersions v2 request and response', async () => {
    const { body } = await decodeKafkajsRequest(ApiKey.ApiVersions, 'apiVersions/v2', {});
    expect(body.clientSoftwareName).to.equal('');
    const decoded = await kafkajsDecodeResponse(ApiKey.ApiVersions, 2, 'apiVersions/v2', {
      errorCode: 0,
      apiKeys: [
        { apiKey: 0, minVersion: 0, maxVersion: 11 },
        { apiKey: 18, minVersion: 0, maxVersion: 4 },
      ],
      throttleTimeMs: 5,
    });
    expect(decoded.errorCode).to.equal(0);
    expect(decoded.apiVersions).to.deep.equal([
      { apiKey: 0, minVersion: 0, maxVersion: 11 },
      { apiKey: 18, minVersion: 0, maxVersion: 4 },
    ]);
    expect(decoded.clientSideThrottleTime).to.equal(5);
  });

  it('Produce v7 request (with a record batch) and Fetch v11 response carrying it back', async () => {
    const { body } = await decodeKafkajsRequest(ApiKey.Produce, 'produce/v7', {
      acks: -1,
      timeout: 30000,
      topicData: [
        { topic: 'events', partitions: [{ partition: 2, messages: [{ key: 'k1', value: 'v1' }, { key: 'k2', value: 'hello world' }] }] },
      ],
    });
    expect(body.transactionalId).to.equal(null);
    expect(body.acks).to.equal(-1);
    expect(body.timeoutMs).to.equal(30000);
    expect(body.topicData[0].name).to.equal('events');
    const part = body.topicData[0].partitionData[0];
    expect(part.index).to.equal(2);
    const batch = part.records!;
    expect(batch).to.be.instanceOf(Buffer);
    expect(batch.readInt32BE(8)).to.equal(batch.length - 12); // batchLength
    expect(batch[16]).to.equal(2); // magic

    const produced = await kafkajsDecodeResponse(ApiKey.Produce, 7, 'produce/v7', {
      responses: [{ name: 'events', partitionResponses: [{ index: 2, errorCode: 0, baseOffset: 100n, logAppendTimeMs: -1n, logStartOffset: 0n }] }],
      throttleTimeMs: 0,
    });
    const pr = (produced.topics as { topicName: string; partitions: { partition: number; errorCode: number; baseOffset: string }[] }[])[0];
    expect(pr.topicName).to.equal('events');
    expect(pr.partitions[0]).to.include({ partition: 2, errorCode: 0, baseOffset: '100' });

    const fetch = await decodeKafkajsRequest(ApiKey.Fetch, 'fetch/v11', {
      replicaId: -1,
      maxWaitTime: 500,
      minBytes: 1,
      maxBytes: 1048576,
      topics: [{ topic: 'events', partitions: [{ partition: 2, fetchOffset: '0', maxBytes: 65536 }] }],
      rackId: 'rack-1',
    });
    expect(fetch.body.maxWaitMs).to.equal(500);
    expect(fetch.body.isolationLevel).to.equal(1);
    expect(fetch.body.rackId).to.equal('rack-1');
    expect(fetch.body.topics[0].topic).to.equal('events');
    expect(fetch.body.topics[0].partitions[0]).to.include({ partition: 2, partitionMaxBytes: 65536, currentLeaderEpoch: -1 });
    expect(fetch.body.topics[0].partitions[0].fetchOffset).to.equal(0n);

    const fetched = await kafkajsDecodeResponse(ApiKey.Fetch, 11, 'fetch/v11', {
      throttleTimeMs: 0,
      errorCode: 0,
      sessionId: 0,
      responses: [
        {
          topic: 'events',
          partitions: [
            { partitionIndex: 2, errorCode: 0, highWatermark: 2n, lastStableOffset: 2n, logStartOffset: 0n, abortedTransactions: [], preferredReadReplica: -1, records: batch },
          ],
        },
      ],
    });
    const fr = (fetched.responses as { topicName: string; partitions: { messages: { key: Buffer; value: Buffer }[] }[] }[])[0];
    expect(fr.topicName).to.equal('events');
    const msgs = fr.partitions[0].messages.map((m) => [m.key.toString(), m.value.toString()]);
    expect(msgs).to.deep.equal([
      ['k1', 'v1'],
      ['k2', 'hello world'],
    ]);
  });

  it('JoinGroup v5 request and response (bytes fields)', async () => {
    const { body } = await decodeKafkajsRequest(ApiKey.JoinGroup, 'joinGroup/v5', {
      groupId: 'g',
      sessionTimeout: 10000,
      rebalanceTimeout: 60000,
      memberId: '',
      groupInstanceId: null,
      protocolType: 'consumer',
      groupProtocols: [{ name: 'RoundRobinAssigner', metadata: Buffer.from([0, 1, 2, 3]) }],
    });
    expect(body).to.deep.include({ groupId: 'g', sessionTimeoutMs: 10000, rebalanceTimeoutMs: 60000, memberId: '', groupInstanceId: null, protocolType: 'consumer' });
    expect(body.protocols[0].name).to.equal('RoundRobinAssigner');
    expect([...body.protocols[0].metadata]).to.deep.equal([0, 1, 2, 3]);

    const decoded = await kafkajsDecodeResponse(ApiKey.JoinGroup, 5, 'joinGroup/v5', {
      throttleTimeMs: 0,
      errorCode: 0,
      generationId: 3,
      protocolName: 'RoundRobinAssigner',
      leader: 'm-1',
      memberId: 'm-1',
      members: [{ memberId: 'm-1', groupInstanceId: null, metadata: Buffer.from([9, 8]) }],
    });
    expect(decoded).to.deep.include({ errorCode: 0, generationId: 3, groupProtocol: 'RoundRobinAssigner', leaderId: 'm-1', memberId: 'm-1' });
    const members = decoded.members as { memberId: string; groupInstanceId: string | null; memberMetadata: Buffer }[];
    expect(members[0].memberId).to.equal('m-1');
    expect(members[0].groupInstanceId).to.equal(null);
    expect([...members[0].memberMetadata]).to.deep.equal([9, 8]);
  });

  it('FindCoordinator v2 request and response', async () => {
    const { body } = await decodeKafkajsRequest(ApiKey.FindCoordinator, 'findCoordinator/v2', { coordinatorKey: 'grp', coordinatorType: 0 });
    expect(body.key).to.equal('grp');
    expect(body.keyType).to.equal(0);
    const decoded = await kafkajsDecodeResponse(ApiKey.FindCoordinator, 2, 'findCoordinator/v2', {
      throttleTimeMs: 0,
      errorCode: 0,
      errorMessage: null,
      nodeId: 1,
      host: 'localhost',
      port: 9092,
      coordinators: [],
    });
    expect(decoded.errorCode).to.equal(0);
    expect(decoded.coordinator).to.deep.equal({ nodeId: 1, host: 'localhost', port: 9092 });
  });
});
