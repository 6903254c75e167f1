// Client quotas on a broker: DescribeClientQuotas (48) and AlterClientQuotas (49) over the wire with
// Kafka's errors, kept across a restart, refused without DESCRIBE_CONFIGS / ALTER_CONFIGS on the
// cluster; kafka-configs (Kafka 4.4's tool) on clients and users; and enforcement: a kafkajs producer
// held to its producer_byte_rate and told throttle_time_ms, a Produce of a version before KIP-219
// answered only after its throttle (the connection muted meanwhile, a bystander served), a consumer's
// throttled Fetch answered empty, CreateTopics against controller_mutation_rate (strict and permissive),
// a SASL user's quota applying to that user only.
import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { Kafka, logLevel, type LogEntry } from 'kafkajs';
import { ApiKey } from '../../src/protocol/generated';
import type { AlterClientQuotasResponse } from '../../src/protocol/generated/AlterClientQuotasResponse';
import type { DescribeClientQuotasResponse } from '../../src/protocol/generated/DescribeClientQuotasResponse';
import type { ProduceResponse } from '../../src/protocol/generated/ProduceResponse';
import type { MetadataResponse } from '../../src/protocol/generated/MetadataResponse';
import type { FetchResponse } from '../../src/protocol/generated/FetchResponse';
import type { CreateTopicsResponse } from '../../src/protocol/generated/CreateTopicsResponse';
import { buildBatchSync } from '../../src/records/build-batch';
import { startBroker, type RunningBroker } from '../../src/broker';
import { STANDARD_AUTHORIZER_CLASS } from '../../src/config/definitions';
import { withBroker } from '../helpers/broker';
import { RawClient } from '../helpers/raw-client';
import { kafkaConfigs, skipUnlessKafkaToolsFetched } from '../helpers/kafka-tool';

type Entity = { entityType: string; entityName: string | null }[];
type Op = { key: string; value: number; remove: boolean };

async function alter(client: RawClient, entries: { entity: Entity; ops: Op[] }[], validateOnly = false, version = 1) {
  return client.request<AlterClientQuotasResponse>(ApiKey.AlterClientQuotas, version, { entries, validateOnly });
}

async function describeAll(client: RawClient, version = 1) {
  const res = await client.request<DescribeClientQuotasResponse>(ApiKey.DescribeClientQuotas, version, { components: [], strict: false });
  return (res.entries ?? []).map((e) => ({
    entity: Object.fromEntries(e.entity.map((x) => [x.entityType, x.entityName])),
    values: Object.fromEntries(e.values.map((v) => [v.key, v.value])),
  })).sort((a, b) => (JSON.stringify(a.entity) < JSON.stringify(b.entity) ? -1 : 1));
}

const set = (key: string, value: number): Op => ({ key, value, remove: false });

describe('client quotas on a broker', function () {
  this.timeout(60_000);

  describe('AlterClientQuotas and DescribeClientQuotas', () => {
    let dataDir: string;
    let running: RunningBroker | undefined;
    before(async () => { dataDir = await mkdtemp(path.join(os.tmpdir(), 'fjord-quotas-')); });
    after(async () => {
      await running?.close();
      await rm(dataDir, { recursive: true, force: true });
    });

    it('sets, validates, removes and describes quotas, and keeps them across a restart', async () => {
      running = await startBroker({ dataDir, logLevel: 'silent' });
      let client = await RawClient.connect(running.port);
      const res = await alter(client, [
        { entity: [{ entityType: 'client-id', entityName: 'c1' }], ops: [set('producer_byte_rate', 1024)] },
        { entity: [{ entityType: 'user', entityName: null }], ops: [set('consumer_byte_rate', 2048), set('request_percentage', 12.5)] },
        { entity: [{ entityType: 'user', entityName: 'alice' }, { entityType: 'client-id', entityName: null }], ops: [set('producer_byte_rate', 1.5)] },
        { entity: [{ entityType: 'group', entityName: 'g' }], ops: [set('producer_byte_rate', 1)] },
      ]);
      expect(res.entries.map((e) => [e.errorCode, e.errorMessage])).to.deep.equal([
        [0, null], [0, null], [42, 'producer_byte_rate cannot be a fractional value.'], [42, 'Unhandled client quota entity type: group'],
      ]);
      // validate_only checks and writes nothing.
      const checked = await alter(client, [{ entity: [{ entityType: 'client-id', entityName: 'c2' }], ops: [set('producer_byte_rate', 5)] }], true);
      expect(checked.entries[0].errorCode).to.equal(0);
      const expected = [
        { entity: { 'client-id': 'c1' }, values: { producer_byte_rate: 1024 } },
        { entity: { user: null }, values: { consumer_byte_rate: 2048, request_percentage: 12.5 } },
      ];
      expect(await describeAll(client)).to.deep.equal(expected);
      expect(await describeAll(client, 0)).to.deep.equal(expected);

      // A filter: the default user, strictly.
      const defaults = await client.request<DescribeClientQuotasResponse>(ApiKey.DescribeClientQuotas, 1, {
        components: [{ entityType: 'user', matchType: 1, match: null }], strict: true,
      });
      expect(defaults.entries?.map((e) => e.entity)).to.deep.equal([[{ entityType: 'user', entityName: null }]]);
      const bad = await client.request<DescribeClientQuotasResponse>(ApiKey.DescribeClientQuotas, 1, {
        components: [{ entityType: 'user', matchType: 7, match: null }], strict: false,
      });
      expect([bad.errorCode, bad.errorMessage, bad.entries]).to.deep.equal([42, 'Unknown match type 7', null]);

      // Removing a key; removing the last key removes the entity.
      await alter(client, [{ entity: [{ entityType: 'user', entityName: null }], ops: [{ key: 'request_percentage', value: 0, remove: true }] }]);
      await alter(client, [{ entity: [{ entityType: 'client-id', entityName: 'c1' }], ops: [{ key: 'producer_byte_rate', value: 0, remove: true }] }]);
      await alter(client, [{ entity: [{ entityType: 'user', entityName: 'bob' }, { entityType: 'client-id', entityName: 'c/1' }], ops: [set('controller_mutation_rate', 0.5)] }]);
      const kept = [
        { entity: { user: 'bob', 'client-id': 'c/1' }, values: { controller_mutation_rate: 0.5 } },
        { entity: { user: null }, values: { consumer_byte_rate: 2048 } },
      ];
      expect(await describeAll(client)).to.deep.equal(kept);
      client.close();
      await running.close();

      running = await startBroker({ dataDir, logLevel: 'silent' });
      client = await RawClient.connect(running.port);
      expect(await describeAll(client)).to.deep.equal(kept);
      client.close();
    });
  });

  describe('authorization', () => {
    // The StandardAuthorizer on, no ACLs: the anonymous client may neither describe nor alter.
    const broker = withBroker({ config: { 'authorizer.class.name': STANDARD_AUTHORIZER_CLASS } });

    it('needs DESCRIBE_CONFIGS on the cluster to describe and ALTER_CONFIGS to alter', async () => {
      const client = await RawClient.connect(broker.current().port);
      const described = await client.request<DescribeClientQuotasResponse>(ApiKey.DescribeClientQuotas, 1, { components: [], strict: false });
      expect([described.errorCode, described.errorMessage, described.entries]).to.deep.equal([31, 'Cluster authorization failed.', null]);
      const altered = await alter(client, [
        { entity: [{ entityType: 'user', entityName: 'u' }], ops: [set('producer_byte_rate', 1)] },
        { entity: [{ entityType: 'client-id', entityName: 'c' }], ops: [set('producer_byte_rate', 1)] },
      ]);
      expect(altered.entries.map((e) => [e.errorCode, e.errorMessage])).to.deep.equal([[31, 'Cluster authorization failed.'], [31, 'Cluster authorization failed.']]);
      expect(broker.current().broker.controller.clientQuotas().size).to.equal(0);
      client.close();
    });
  });

  describe('enforcement', () => {
    // Three windows of a second: the first requests are measured as if two empty windows came before.
    const broker = withBroker({ config: { 'quota.window.num': '3' } });

    before(async () => {
      const client = await RawClient.connect(broker.current().port);
      const res = await alter(client, [
        { entity: [{ entityType: 'client-id', entityName: 'throttled' }], ops: [set('producer_byte_rate', 100_000)] },
        { entity: [{ entityType: 'client-id', entityName: 'raw-test' }], ops: [set('producer_byte_rate', 10_000), set('consumer_byte_rate', 1000), set('controller_mutation_rate', 1)] },
      ]);
      expect(res.entries.map((e) => e.errorCode)).to.deep.equal([0, 0]);
      client.close();
    });
    const fetch = (client: RawClient) => client.request<FetchResponse>(ApiKey.Fetch, 12, {
      replicaId: -1, maxWaitMs: 0, minBytes: 0, maxBytes: 1 << 20, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
      topics: [{ topic: 'quota-raw', partitions: [{ partition: 0, fetchOffset: 0n, partitionMaxBytes: 1 << 20, currentLeaderEpoch: -1, logStartOffset: -1n }] }],
      forgottenTopicsData: [], rackId: '',
    });

    it('holds a kafkajs producer to its producer_byte_rate, within 10%, telling it throttle_time_ms', async function () {
      this.timeout(60_000);
      const throttleTimes: number[] = [];
      const kafka = new Kafka({
        clientId: 'throttled', brokers: [broker.current().bootstrap], logLevel: logLevel.DEBUG,
        logCreator: () => ({ log }: LogEntry) => {
          // kafkajs logs each response at debug level; Produce v6+ throttle times are the client's to honour.
          const data = (log as { data?: { clientSideThrottleTime?: number } }).data;
          if (log.message.startsWith('Response Produce') && typeof data?.clientSideThrottleTime === 'number') throttleTimes.push(data.clientSideThrottleTime);
        },
      });
      const admin = kafka.admin();
      await admin.connect();
      await admin.createTopics({ topics: [{ topic: 'quota-produce', numPartitions: 1 }] });
      await admin.disconnect();
      const producer = kafka.producer({ allowAutoTopicCreation: false });
      await producer.connect();
      const value = Buffer.alloc(10_000, 7);
      // Past the first windows (which allow a burst), the rate over the next 6 s is the quota's.
      const start = Date.now();
      let measuredFrom = 0;
      let bytes = 0;
      while (Date.now() - start < 9000) {
        await producer.send({ topic: 'quota-produce', messages: [{ value }], acks: 1 });
        if (measuredFrom === 0 && Date.now() - start >= 3000) measuredFrom = Date.now();
        else if (measuredFrom !== 0) bytes += value.length;
      }
      const rate = bytes / ((Date.now() - measuredFrom) / 1000);
      await producer.disconnect();
      expect(rate).to.be.within(90_000, 110_000);
      expect(throttleTimes.some((t) => t > 0)).to.equal(true);
    });

    it('answers a Produce older than KIP-219 only once its throttle is over, and mutes the connection', async () => {
      const client = await RawClient.connect(broker.current().port); // client id raw-test: 10000 B/s
      await client.request<MetadataResponse>(ApiKey.Metadata, 8, { topics: [{ name: 'quota-raw' }], allowAutoTopicCreation: true });
      const batch = (size: number) => buildBatchSync({ records: [{ value: Buffer.alloc(size, 1) }] });
      const produce = (version: number, records: Buffer) => client.request<ProduceResponse>(ApiKey.Produce, version, {
        transactionalId: null, acks: 1, timeoutMs: 5000,
        topicData: [{ name: 'quota-raw', partitionData: [{ index: 0, records }] }],
      });
      let at = Date.now();
      // ~30 KB measured over 2 s (the current window and two before it, empty): 15 KB/s against
      // 10 KB/s, so (15000 - 10000) / 10000 * 2000 ms.
      const v5 = await produce(5, batch(30_000));
      const v5Ms = Date.now() - at;
      expect(v5.throttleTimeMs).to.be.within(1000, 1100);
      expect(v5Ms).to.be.at.least((v5.throttleTimeMs ?? 0) - 50);
      at = Date.now();
      const v8 = await produce(8, batch(100)); // still over: the client throttles itself, answered at once
      expect(Date.now() - at).to.be.below(300);
      expect(v8.throttleTimeMs).to.be.greaterThan(500);
      at = Date.now();
      await client.request<MetadataResponse>(ApiKey.Metadata, 8, { topics: [], allowAutoTopicCreation: false });
      // Meanwhile another connection is served at once.
      const bystander = await RawClient.connect(broker.current().port);
      const bystanderAt = Date.now();
      await bystander.request<MetadataResponse>(ApiKey.Metadata, 8, { topics: [], allowAutoTopicCreation: false });
      expect(Date.now() - bystanderAt).to.be.below(300);
      bystander.close();
      await client.request<MetadataResponse>(ApiKey.Metadata, 8, { topics: [], allowAutoTopicCreation: false });
      expect(Date.now() - at).to.be.at.least((v8.throttleTimeMs ?? 0) - 100); // not read before the mute ends
      client.close();
    });

    it('answers a consumer over its consumer_byte_rate with an empty Fetch and the throttle time', async () => {
      const client = await RawClient.connect(broker.current().port); // raw-test: 1000 B/s
      const first = await fetch(client);
      // ~30 KB read over 2 s against 1000 B/s: the records are not sent, and not counted.
      expect(first.responses).to.deep.equal([]);
      expect(first.throttleTimeMs).to.be.within(25_000, 35_000);
      client.close();
      // The first connection is muted; another of the same client id is throttled as much, not twice as much.
      const again = await RawClient.connect(broker.current().port);
      const second = await fetch(again);
      expect(second.throttleTimeMs).to.be.within(first.throttleTimeMs! - 1000, first.throttleTimeMs! + 1000);
      again.close();
    });

    it('refuses topics over controller_mutation_rate from CreateTopics v6 and only throttles older versions', async () => {
      const topic = (name: string, numPartitions: number) => ({ name, numPartitions, replicationFactor: 1, assignments: [], configs: [] });
      // raw-test: 1 partition per second, a bucket of 11 (controller.quota.window.num windows of a second).
      let client = await RawClient.connect(broker.current().port);
      const strict = await client.request<CreateTopicsResponse>(ApiKey.CreateTopics, 7, {
        topics: [topic('mutation-1', 20), topic('mutation-2', 1)], timeoutMs: 5000, validateOnly: false,
      });
      expect(strict.topics.map((t) => [t.name, t.errorCode, t.errorMessage])).to.deep.equal([
        ['mutation-1', 0, null], ['mutation-2', 89, 'The throttling quota has been exceeded.'],
      ]);
      expect(strict.throttleTimeMs).to.be.within(8000, 9000); // 9 partitions of debt at 1 per second, less what refilled meanwhile
      client.close();
      client = await RawClient.connect(broker.current().port);
      const permissive = await client.request<CreateTopicsResponse>(ApiKey.CreateTopics, 5, {
        topics: [topic('mutation-3', 1)], timeoutMs: 5000, validateOnly: false,
      });
      expect(permissive.topics.map((t) => t.errorCode)).to.deep.equal([0]);
      expect(permissive.throttleTimeMs).to.be.within(8500, 10_000); // one more partition of debt
      client.close();
    });
  });

  describe('per SASL user', () => {
    const broker = withBroker({
      config: {
        listeners: 'SASL_PLAINTEXT://127.0.0.1:0', 'sasl.enabled.mechanisms': 'PLAIN',
        'listener.name.sasl_plaintext.plain.sasl.jaas.config': 'org.apache.kafka.common.security.plain.PlainLoginModule required '
          + 'username="alice" password="a" user_alice="a" user_bob="b";',
      },
    });
    const login = async (user: string, password: string) => {
      const client = await RawClient.connect(broker.current().port);
      await client.request(ApiKey.SaslHandshake, 1, { mechanism: 'PLAIN' });
      const auth = await client.request<{ errorCode: number }>(ApiKey.SaslAuthenticate, 2, { authBytes: Buffer.from(`\0${user}\0${password}`) });
      expect(auth.errorCode).to.equal(0);
      return client;
    };

    it('throttles the authenticated user its quota names, and not another', async () => {
      const alice = await login('alice', 'a');
      const altered = await alter(alice, [{ entity: [{ entityType: 'user', entityName: 'alice' }], ops: [set('producer_byte_rate', 1000)] }]);
      expect(altered.entries[0].errorCode).to.equal(0);
      await alice.request<MetadataResponse>(ApiKey.Metadata, 8, { topics: [{ name: 'quota-users' }], allowAutoTopicCreation: true });
      const produce = (client: RawClient) => client.request<ProduceResponse>(ApiKey.Produce, 8, {
        transactionalId: null, acks: 1, timeoutMs: 5000,
        topicData: [{ name: 'quota-users', partitionData: [{ index: 0, records: buildBatchSync({ records: [{ value: Buffer.alloc(20_000, 1) }] }) }] }],
      });
      expect((await produce(alice)).throttleTimeMs).to.be.greaterThan(0);
      const bob = await login('bob', 'b');
      expect((await produce(bob)).throttleTimeMs).to.equal(0);
      alice.close();
      bob.close();
    });
  });

  describe('kafka-configs (Kafka 4.4\'s ConfigCommand)', function () {
    this.timeout(300_000);
    const broker = withBroker();
    const configCommand = (...args: string[]) => kafkaConfigs(broker.current().bootstrap, ...args);
    skipUnlessKafkaToolsFetched();

    it('alters and describes client, user and default quotas', async () => {
      expect((await configCommand('--alter', '--add-config', 'producer_byte_rate=1024', '--entity-type', 'clients', '--entity-name', 'c1')))
        .to.include({ status: 0, out: 'Completed updating config for client c1.' });
      expect((await configCommand('--alter', '--add-config', 'consumer_byte_rate=2048,request_percentage=50', '--entity-type', 'users', '--entity-default')))
        .to.include({ status: 0 });
      expect((await configCommand('--describe', '--entity-type', 'clients', '--entity-name', 'c1')).out)
        .to.equal("Quota configs for client-id 'c1' are producer_byte_rate=1024.0");
      expect((await configCommand('--describe', '--entity-type', 'clients')).out)
        .to.equal("Quota configs for client-id 'c1' are producer_byte_rate=1024.0");
      // (--describe --entity-type users without a name also asks for SCRAM credentials: DescribeUserScramCredentials.)
      expect((await configCommand('--describe', '--entity-type', 'users', '--entity-default')).out)
        .to.equal('Quota configs for the default user-principal are consumer_byte_rate=2048.0, request_percentage=50.0');
      const refused = await configCommand('--alter', '--add-config', 'producer_byte_rate=-5', '--entity-type', 'clients', '--entity-name', 'c1');
      expect(refused.status).to.equal(1);
      expect(refused.err).to.include('Quota producer_byte_rate must be greater than 0');
    });
  });
});
