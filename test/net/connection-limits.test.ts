// The connection layer against a real broker: request ordering on one connection (issue 11, item 9),
// max.connections.per.ip and its overrides, queued.max.request.bytes with partial frames, and the
// validation of those configs.
import { expect } from 'chai';
import { ApiKey } from '../../src/protocol/generated';
import type { ApiVersionsResponse } from '../../src/protocol/generated/ApiVersionsResponse';
import type { DeleteTopicsResponse } from '../../src/protocol/generated/DeleteTopicsResponse';
import type { ListOffsetsResponse } from '../../src/protocol/generated/ListOffsetsResponse';
import type { MetadataResponse } from '../../src/protocol/generated/MetadataResponse';
import { ErrorCode } from '../../src/common/errors';
import type { ProduceResponse } from '../../src/protocol/generated/ProduceResponse';
import { BrokerConfig } from '../../src/config/broker-config';
import { Compression } from '../../src/records/batch';
import { buildBatchSync } from '../../src/records/records';
import { RawClient } from '../helpers/raw-client';
import { withBroker } from '../helpers/broker';

const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function apiVersions(c: RawClient): Promise<number> {
  return (await c.request<ApiVersionsResponse>(ApiKey.ApiVersions, 3, { clientSoftwareName: 't', clientSoftwareVersion: '1' })).errorCode;
}

/** Whether a response arrives within `ms` (it is consumed). */
async function answeredWithin(c: RawClient, ms: number): Promise<boolean> {
  try {
    await c.receiveFrame(ms);
    return true;
  } catch {
    return false;
  }
}

/** Resolves with whether the broker closed the connection within `ms`. */
async function closedWithin(c: RawClient, ms: number): Promise<boolean> {
  return Promise.race([c.closed.then(() => true), tick(ms).then(() => false)]);
}

describe('connection ordering and limits', function () {
  this.timeout(60000);

  describe('DeleteTopics then an auto-creating Metadata pipelined on one connection (librdkafka)', () => {
    const broker = withBroker({ config: { 'num.partitions': '4' } });

    it('leaves the topic whole, every time, and answers both requests', async () => {
      const c = await RawClient.connect(broker.current().port);
      const topic = 'recreated';
      await c.request(ApiKey.Metadata, 9, { topics: [{ name: topic }], allowAutoTopicCreation: true,
        includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false });
      for (let round = 0; round < 60; round++) {
        c.sendBytes(Buffer.concat([
          RawClient.frame(ApiKey.DeleteTopics, 4, { topicNames: [topic], topics: [], timeoutMs: 30000 }, 1000 + round),
          RawClient.frame(ApiKey.Metadata, 9, { topics: [{ name: topic }], allowAutoTopicCreation: true,
            includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false }, 2000 + round),
        ]));
        const deleted = await c.receive<DeleteTopicsResponse>(ApiKey.DeleteTopics, 4);
        expect(deleted.correlationId).to.equal(1000 + round);
        expect(deleted.body.responses[0].errorCode, 'the topic existed: the previous round left it whole').to.equal(ErrorCode.NONE);
        const created = await c.receive<MetadataResponse>(ApiKey.Metadata, 9);
        expect(created.correlationId).to.equal(2000 + round);
        // Every partition the broker lists has a log behind it.
        const listed = await c.request<MetadataResponse>(ApiKey.Metadata, 9, { topics: [{ name: topic }], allowAutoTopicCreation: false,
          includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false });
        const partitions = listed.topics[0].partitions.map((p) => p.partitionIndex);
        expect(partitions).to.have.length(4);
        const offsets = await c.request<ListOffsetsResponse>(ApiKey.ListOffsets, 6, {
          replicaId: -1, isolationLevel: 0,
          topics: [{ name: topic, partitions: partitions.map((partitionIndex) => ({ partitionIndex, currentLeaderEpoch: -1, timestamp: -1n })) }],
        });
        expect(offsets.topics[0].partitions.map((p) => p.errorCode)).to.deep.equal([0, 0, 0, 0]);
      }
      c.close();
    });
  });

  describe('pipelined Produce requests (they overlap)', () => {
    const broker = withBroker();

    it('get offsets in request order, compressed or not', async () => {
      const c = await RawClient.connect(broker.current().port);
      await c.request(ApiKey.CreateTopics, 5, { topics: [{ name: 'ordered', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }],
        timeoutMs: 30000, validateOnly: false });
      const frames = Array.from({ length: 40 }, (_, i) => {
        const records = Array.from({ length: 1 + (i % 3) }, () => ({ key: null, value: Buffer.alloc(200 * (i % 5), i), headers: [] }));
        const batch = buildBatchSync({ records, compression: i % 2 === 0 ? Compression.GZIP : Compression.NONE });
        return RawClient.frame(ApiKey.Produce, 9, { transactionalId: null, acks: 1, timeoutMs: 30000,
          topicData: [{ name: 'ordered', partitionData: [{ index: 0, records: batch }] }] }, 100 + i);
      });
      c.sendBytes(Buffer.concat(frames));
      let expected = 0n;
      for (let i = 0; i < 40; i++) {
        const { correlationId, body } = await c.receive<ProduceResponse>(ApiKey.Produce, 9);
        expect(correlationId).to.equal(100 + i);
        const p = body.responses[0].partitionResponses[0];
        expect([p.errorCode, p.baseOffset]).to.deep.equal([ErrorCode.NONE, expected]);
        expected += BigInt(1 + (i % 3));
      }
      c.close();
    });

    it('reads a request over 1 MiB sent in pieces while another connection abandons the same frame halfway', async () => {
      const c = await RawClient.connect(broker.current().port);
      await c.request(ApiKey.CreateTopics, 5, { topics: [{ name: 'large', numPartitions: 2, replicationFactor: 1, assignments: [], configs: [] }],
        timeoutMs: 30000, validateOnly: false });
      const batch = (fill: number) => buildBatchSync({ records: [{ key: null, value: Buffer.alloc(900_000, fill), headers: [] }] });
      const frame = RawClient.frame(ApiKey.Produce, 9, { transactionalId: null, acks: 1, timeoutMs: 30000,
        topicData: [{ name: 'large', partitionData: [{ index: 0, records: batch(1) }, { index: 1, records: batch(2) }] }] }, 7);
      expect(frame.length).to.be.above(1 << 20);
      // Half of it on another connection, which then leaves.
      const quitter = await RawClient.connect(broker.current().port);
      quitter.sendBytes(frame.subarray(0, frame.length / 2));
      await tick(50);
      quitter.close();
      for (let at = 0; at < frame.length; at += 100_000) {
        c.sendBytes(frame.subarray(at, at + 100_000));
        await tick(2);
      }
      const { correlationId, body } = await c.receive<ProduceResponse>(ApiKey.Produce, 9);
      expect(correlationId).to.equal(7);
      expect(body.responses[0].partitionResponses.map((p) => [p.index, p.errorCode, p.baseOffset])).to.deep.equal([[0, 0, 0n], [1, 0, 0n]]);
      expect(await apiVersions(c)).to.equal(ErrorCode.NONE);
      c.close();
    });
  });

  describe('max.connections.per.ip and max.connections.per.ip.overrides', () => {
    const broker = withBroker({ config: { 'max.connections.per.ip': '3', 'max.connections.per.ip.overrides': 'localhost:2' } });

    it('closes a connection over the address limit at accept and takes one again once another closes', async () => {
      // 'localhost' resolves to 127.0.0.1: the override (2), not max.connections.per.ip (3), applies.
      const first = await RawClient.connect(broker.current().port);
      const second = await RawClient.connect(broker.current().port);
      expect(await apiVersions(second)).to.equal(ErrorCode.NONE);
      const third = await RawClient.connect(broker.current().port);
      expect(await closedWithin(third, 2000), 'the third connection from 127.0.0.1 is closed').to.equal(true);
      expect(await apiVersions(first), 'those within the limit are served').to.equal(ErrorCode.NONE);
      first.close();
      await tick(50);
      const again = await RawClient.connect(broker.current().port);
      expect(await apiVersions(again)).to.equal(ErrorCode.NONE);
      second.close();
      again.close();
    });
  });

  describe('queued.max.request.bytes', () => {
    const broker = withBroker({ config: { 'socket.request.max.bytes': '100000', 'queued.max.request.bytes': '150000' } });

    it('stops reading while partial frames hold the budget, and reads again once they are gone', async () => {
      const port = broker.current().port;
      const budget = () => broker.current().listener.budget;
      // Two peers claim 90 kB frames and send 10 bytes of each: 180 kB reserved, more than the budget.
      const hostile = await Promise.all([RawClient.connect(port), RawClient.connect(port)]);
      const claim = Buffer.alloc(14);
      claim.writeInt32BE(90_000, 0);
      hostile[0].sendBytes(claim);
      await tick(50);
      hostile[1].sendBytes(claim);
      await tick(50);
      expect(budget().bytesInUse).to.equal(180_000);
      const bystander = await RawClient.connect(port);
      bystander.send(ApiKey.ApiVersions, 3, { clientSoftwareName: 't', clientSoftwareVersion: '1' });
      expect(await answeredWithin(bystander, 300), 'no frame is read while the budget is spent').to.equal(false);
      for (const h of hostile) h.close();
      const answer = await bystander.receive<ApiVersionsResponse>(ApiKey.ApiVersions, 3);
      expect(answer.body.errorCode).to.equal(ErrorCode.NONE);
      expect(budget().bytesInUse, 'the closed connections gave their reservations back').to.equal(0);
      bystander.close();
    });
  });

  it('validates the limits as Kafka does', () => {
    const load = (props: Record<string, string>) => () => new BrokerConfig(props);
    expect(load({ 'queued.max.request.bytes': '1000' })).to.throw('queued.max.request.bytes must be larger or equal to socket.request.max.bytes');
    expect(load({ 'max.connections.per.ip': '0' })).to.throw('max.connections.per.ip can be set to zero only if max.connections.per.ip.overrides property is set.');
    expect(load({ 'max.connections.per.ip.overrides': 'hostName#:100' })).to.throw('max.connections.per.ip.overrides contains invalid addresses : hostName#');
    expect(load({ 'max.connections.per.ip.overrides': 'hostName' })).to.throw("Error parsing configuration property 'max.connections.per.ip.overrides'");
    expect(load({ 'max.connections.per.ip.overrides': 'a:x' })).to.throw("Error parsing configuration property 'max.connections.per.ip.overrides'");
    const ok = new BrokerConfig({ 'max.connections.per.ip': '0', 'max.connections.per.ip.overrides': 'hostName1:100, ::1:5,127.0.0.1:0' });
    expect([...ok.maxConnectionsPerIpOverrides]).to.deep.equal([['hostName1', 100], ['::1', 5], ['127.0.0.1', 0]]);
    expect(new BrokerConfig({ 'queued.max.request.bytes': '104857600' }).getLong('queued.max.request.bytes')).to.equal(104857600);
  });
});
