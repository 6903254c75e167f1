// Faults the fuzzers found, one test each, as the request that found them (shrunk by hand).
import { expect } from 'chai';
import { Reader, Writer, ProtocolError, MAX_STRING_LENGTH } from '../../src/protocol/primitives';
import { ApiKey } from '../../src/protocol/generated';
import type { AlterConfigsResponse } from '../../src/protocol/generated/AlterConfigsResponse';
import type { DescribeConfigsResponse } from '../../src/protocol/generated/DescribeConfigsResponse';
import type { IncrementalAlterConfigsResponse } from '../../src/protocol/generated/IncrementalAlterConfigsResponse';
import type { WriteTxnMarkersResponse } from '../../src/protocol/generated/WriteTxnMarkersResponse';
import type { MetadataResponse } from '../../src/protocol/generated/MetadataResponse';
import type { JoinGroupResponse } from '../../src/protocol/generated/JoinGroupResponse';
import type { FindCoordinatorResponse } from '../../src/protocol/generated/FindCoordinatorResponse';
import { ErrorCode } from '../../src/common/errors';
import { detectInvalidTopic } from '../../src/cluster/topic-names';
import { withBroker } from '../helpers/broker';
import { RawClient } from '../helpers/raw-client';

const TOPIC = 2;   // ConfigResource type
const BROKER = 4;

describe('fuzzer regressions', function () {
  const broker = withBroker({ config: { 'group.initial.rebalance.delay.ms': '0' } });

  describe('strings that are not valid UTF-8', () => {
    function int16Prefixed(bytes: Buffer): Buffer {
      const w = new Writer();
      w.int16(bytes.length);
      w.raw(bytes);
      return w.finishOne();
    }

    it('refuses one that would be longer than 32,767 bytes once decoded (each bad byte becomes 3)', () => {
      const bad = Buffer.alloc(20000, 0xff);
      expect(() => new Reader(int16Prefixed(bad)).string()).to.throw(ProtocolError, /not valid UTF-8/);
      const compact = Buffer.concat([Buffer.from([0x81, 0x9c, 0x01]), bad]); // varint 20001
      expect(() => new Reader(compact).compactString()).to.throw(ProtocolError, /not valid UTF-8/);
    });

    it('keeps decoding one that still fits, and long valid text up to the limit', () => {
      const fits = new Reader(int16Prefixed(Buffer.alloc(10000, 0xff))).string();
      expect(Buffer.byteLength(fits)).to.equal(30000);
      const euros = '\u20ac'.repeat(Math.floor(MAX_STRING_LENGTH / 3));
      expect(new Reader(int16Prefixed(Buffer.from(euros))).string()).to.equal(euros);
    });

    it('closes only the connection of a request carrying one; the broker keeps serving', async () => {
      const port = broker.current().port;
      const c = await RawClient.connect(port);
      // Metadata v4 naming one topic of 20,000 0xff bytes: decoded, its name would not fit a response.
      const w = new Writer();
      w.int16(ApiKey.Metadata); w.int16(4); w.int32(7); w.int16(-1);
      w.int32(1); w.int16(20000); w.raw(Buffer.alloc(20000, 0xff)); w.bool(false);
      const body = w.finishOne();
      const size = Buffer.alloc(4);
      size.writeInt32BE(body.length);
      c.sendBytes(Buffer.concat([size, body]));
      await c.closed;
      const other = await RawClient.connect(port);
      const res = await other.request<MetadataResponse>(ApiKey.Metadata, 4, { topics: [], allowAutoTopicCreation: false });
      expect(res.brokers).to.have.length(1);
      other.close();
    });
  });

  describe('error messages that quote the peer', () => {
    const long = 'n'.repeat(MAX_STRING_LENGTH);

    it('cut a 32 KB topic name in the invalid-topic message', () => {
      const reason = detectInvalidTopic(long)!;
      expect(reason).to.match(/^the length of 'n{1000}\.\.\. \(32767 characters\)' is longer than the max allowed length 249$/);
      expect(detectInvalidTopic('n'.repeat(300))).to.include(`'${'n'.repeat(300)}'`);
    });

    it('AlterConfigs with a 32 KB config name, or a null value, is answered INVALID_CONFIG/INVALID_REQUEST', async () => {
      const c = await RawClient.connect(broker.current().port);
      await c.request<MetadataResponse>(ApiKey.Metadata, 4, { topics: [{ name: 'quoted' }], allowAutoTopicCreation: true });
      for (const version of [0, 2]) {
        const res = await c.request<AlterConfigsResponse>(ApiKey.AlterConfigs, version, {
          resources: [
            { resourceType: TOPIC, resourceName: 'quoted', configs: [{ name: long, value: 'v' }] },
            { resourceType: TOPIC, resourceName: 'quoted', configs: [{ name: long, value: null }] },
          ],
          validateOnly: true,
        });
        expect(res.responses.map((r) => r.errorCode)).to.deep.equal([ErrorCode.INVALID_CONFIG, ErrorCode.INVALID_REQUEST]);
        for (const r of res.responses) expect(r.errorMessage!.length).to.be.lessThan(1200);
      }
      c.close();
    });

    it('a 32 KB broker resource name in DescribeConfigs and IncrementalAlterConfigs is answered with the message cut', async () => {
      const c = await RawClient.connect(broker.current().port);
      const described = await c.request<DescribeConfigsResponse>(ApiKey.DescribeConfigs, 4, {
        resources: [{ resourceType: BROKER, resourceName: long, configurationKeys: null }], includeSynonyms: false, includeDocumentation: false,
      });
      expect(described.results[0].errorCode).to.equal(ErrorCode.INVALID_REQUEST);
      expect(described.results[0].errorMessage).to.match(/^Unexpected broker id, expected 0.*but received n{1000}\.\.\. \(32767 characters\)$/);
      const altered = await c.request<IncrementalAlterConfigsResponse>(ApiKey.IncrementalAlterConfigs, 1, {
        resources: [{ resourceType: TOPIC, resourceName: 'quoted', configs: [{ name: long, configOperation: 0, value: '1' }] }], validateOnly: true,
      });
      expect(altered.responses[0].errorCode).to.equal(ErrorCode.INVALID_CONFIG);
      expect(altered.responses[0].errorMessage!.length).to.be.lessThan(1200);
      c.close();
    });
  });

  it('WriteTxnMarkers for a producer id past 2^53 answers INVALID_PRODUCER_ID_MAPPING instead of failing the connection', async () => {
    const c = await RawClient.connect(broker.current().port);
    await c.request<MetadataResponse>(ApiKey.Metadata, 4, { topics: [{ name: 'markers' }], allowAutoTopicCreation: true });
    for (const producerId of [(1n << 63n) - 1n, 1n << 53n]) {
      const res = await c.request<WriteTxnMarkersResponse>(ApiKey.WriteTxnMarkers, 1, {
        markers: [{ producerId, producerEpoch: 0, transactionResult: true, topics: [{ name: 'markers', partitionIndexes: [0] }], coordinatorEpoch: 0 }],
      });
      expect(res.markers[0].topics[0].partitions[0].errorCode).to.equal(ErrorCode.INVALID_PRODUCER_ID_MAPPING);
    }
    c.close();
  });

  describe('JoinGroup', () => {
    const protocol = (name: string) => ({ name, metadata: Buffer.from([0, 1]) });
    const join = (groupId: string, memberId: string, names: string[]) =>
      ({ groupId, sessionTimeoutMs: 6000, memberId, protocolType: 'consumer', protocols: names.map(protocol) });

    before(async () => {
      // The coordinator loads in the background: FindCoordinator says when it is ready.
      const c = await RawClient.connect(broker.current().port);
      for (;;) {
        const res = await c.request<FindCoordinatorResponse>(ApiKey.FindCoordinator, 3, { key: 'g', keyType: 0, coordinatorKeys: [] });
        if (res.errorCode === ErrorCode.NONE) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      c.close();
    });

    it('gives a client id of 32 KB a member id that fits a response (it killed the process)', async () => {
      const c = await RawClient.connect(broker.current().port);
      c.sendBytes(RawClient.frame(ApiKey.JoinGroup, 0, join('long-client', '', ['range']), 1, 'c'.repeat(MAX_STRING_LENGTH)));
      const res = (await c.receive<JoinGroupResponse>(ApiKey.JoinGroup, 0)).body;
      expect(res.errorCode).to.equal(ErrorCode.NONE);
      expect(res.memberId).to.match(/^c{1000}-[0-9a-f-]{36}$/);
      c.close();
    });

    it('completes a rebalance where a member lists one protocol twice (the join phase threw and every join hung)', async () => {
      const first = await RawClient.connect(broker.current().port);
      const second = await RawClient.connect(broker.current().port);
      const leader = await first.request<JoinGroupResponse>(ApiKey.JoinGroup, 0, join('twice', '', ['range', 'range']));
      expect(leader.errorCode).to.equal(ErrorCode.NONE);
      second.send(ApiKey.JoinGroup, 0, join('twice', '', ['range']));
      first.send(ApiKey.JoinGroup, 0, join('twice', leader.memberId, ['range', 'range']));
      const [a, b] = await Promise.all([first.receive<JoinGroupResponse>(ApiKey.JoinGroup, 0), second.receive<JoinGroupResponse>(ApiKey.JoinGroup, 0)]);
      expect([a.body.errorCode, b.body.errorCode]).to.deep.equal([ErrorCode.NONE, ErrorCode.NONE]);
      expect([a.body.protocolName, b.body.protocolName]).to.deep.equal(['range', 'range']);
      expect(a.body.generationId).to.equal(leader.generationId! + 1);
      first.close();
      second.close();
    });
  });
});
