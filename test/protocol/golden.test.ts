/**
 * Golden bytes from REAL clients (captured by scripts/capture-golden.js into test/protocol/golden/):
 * every request frame a client sent and the response Fjord gave it must decode with our codec at the
 * recorded version, consume every byte, and re-encode (header + body) to exactly the same bytes.
 * Then a few decoded values are checked, to prove the decoding is right and not merely symmetric.
 */
import { expect } from 'chai';
import * as fs from 'fs';
import * as path from 'path';
import {
  ApiKey,
  decodeRequestHeader,
  decodeResponseHeader,
  encodeRequestHeader,
  encodeResponseHeader,
  getApiSpec,
  requestHeaderVersion,
  responseHeaderVersion,
} from '../../src/protocol/generated';
import type {
  ApiVersionsRequest,
  ApiVersionsResponse,
  CreateTopicsRequest,
  CreateTopicsResponse,
  DeleteTopicsRequest,
  DescribeClusterRequest,
  DescribeConfigsRequest,
  DescribeTopicPartitionsRequest,
  MetadataRequest,
  RequestHeader,
} from '../../src/protocol/generated';
import { Reader, Writer } from '../../src/protocol/primitives';
import { apiVersions } from '../../src/handlers/api-versions';
import { ErrorCode } from '../../src/common/errors';
import { ROOT } from './spec-util';

const GOLDEN = path.join(ROOT, 'test', 'protocol', 'golden');

interface Fixture {
  client: string;
  api: string;
  apiKey: number;
  version: number;
  /** null for the first occurrence of (client, API, version); else the shape it was kept for. */
  variant: string | null;
  request: string;
  response: string | null;
}

interface GoldenIndex {
  clients: Record<string, string>;
  params: Record<string, { topic: string; partitions: number; replicationFactor: number }>;
  fixtures: Fixture[];
}

const index: GoldenIndex = JSON.parse(fs.readFileSync(path.join(GOLDEN, 'index.json'), 'utf8'));

/**
 * Fixtures in which a client sends tagged fields our specs do not know: request or response file ->
 * the unknown tags, in wire order. Our decoders skip unknown tags, so our re-encoding lacks them: those
 * fixtures are compared with exactly those entries cut out (and their sections' counts lowered); every
 * other fixture is compared byte for byte. Empty: none of the captured clients sends unknown tags.
 */
const UNKNOWN_TAGS: Record<string, number[]> = {};

/**
 * Requests in which a client sends bytes after the last field of the message: known CLIENT bugs, file ->
 * the bytes left over (hex) and why. Kafka's broker reads the fields and ignores whatever follows them
 * (so does Fjord's connection code); so do we here, explicitly: decoding must leave exactly these bytes,
 * and the re-encoding must equal the fixture without them. Every other fixture is consumed to the byte.
 */
const TRAILING_BYTES: Record<string, { hex: string; why: string }> = {
  'confluent-kafka/Metadata-v12-all-topics-request.hex': {
    hex: '010000',
    why: 'librdkafka bug confluentinc/librdkafka#5049 (open; fix proposed in PR #5053): for Metadata v9+ with ' +
      'a null topics array it reserves a 4-byte array count, writes the 1-byte compact null (00) and does not ' +
      'erase the other 3 bytes. It means 00 [00 00 00] 01 00 00 (null, stray, AllowAutoTopicCreation=true, ' +
      'IncludeTopicAuthorizedOperations=false, no tags); a broker reads 00 00 00 00 (null, false, false, no ' +
      'tags) and leaves 01 00 00. librdkafka 2.0.2 (kcat) is not affected: it uses Metadata v4 (int32 -1).',
  },
};

/**
 * Requests at a version above what we serve, which only ApiVersions may see (KIP-511: the client probes
 * with its newest version, the broker answers UNSUPPORTED_VERSION at v0 with its ranges, and the client
 * retries at a version we serve). Their bodies are not answered at their version, by design; the specs
 * may know the version (the codec can be ahead of the handler). An ApiVersions fixture is one if it was
 * answered as one when captured (its error code, first in every version's body after the v0 header,
 * is UNSUPPORTED_VERSION): our range may have grown since.
 */
function isVersionProbe(f: Fixture): boolean {
  if (f.apiKey === ApiKey.ApiVersions) return f.response !== null && load(f.response).readInt16BE(4) === ErrorCode.UNSUPPORTED_VERSION;
  const servedMax = getApiSpec(f.apiKey)?.maxVersion;
  return servedMax !== undefined && f.version > servedMax;
}

function load(file: string): Buffer {
  const text = fs.readFileSync(path.join(GOLDEN, file), 'utf8').trim();
  expect(text, `${file} is hex text`).to.match(/^([0-9a-f]{2})+$/);
  return Buffer.from(text, 'hex');
}

interface SkippedTag {
  tag: number;
  /** offset of the entry (its tag varint) and of the byte after it */
  start: number;
  end: number;
  /** offset of the count varint of the section it is in; -1 if unknown */
  section: number;
}

/** A Reader that records every tagged field the generated decoders skip, i.e. every unknown tag. */
class AuditReader extends Reader {
  readonly skipped: SkippedTag[] = [];

  override skipTaggedFields(): void {
    const section = this.offset;
    const count = this.unsignedVarint();
    for (let i = 0; i < count; i++) {
      const start = this.offset;
      const tag = this.unsignedVarint();
      const size = this.unsignedVarint();
      super.skip(size);
      this.skipped.push({ tag, start, end: this.offset, section });
    }
  }

  /** Generated decoders call skip() only for unknown tags in structs that also have known tagged fields. */
  override skip(n: number): void {
    this.skipped.push({ tag: -1, start: this.offset, end: this.offset + n, section: -1 });
    super.skip(n);
  }
}

function uvarint(n: number): Buffer {
  const w = new Writer();
  w.unsignedVarint(n);
  return w.finishOne();
}

/** `buf` with the skipped tagged-field entries cut out and the counts of their sections lowered. */
function withoutUnknownTags(buf: Buffer, skipped: SkippedTag[]): Buffer {
  for (const s of skipped) {
    if (s.section < 0) {
      throw new Error(`unknown tagged field in a struct with known tags (data at ${s.start}..${s.end}): ` +
        'the golden test cannot cut it out yet; extend withoutUnknownTags');
    }
  }
  const sections = new Map<number, number>();
  for (const s of skipped) sections.set(s.section, (sections.get(s.section) ?? 0) + 1);
  const cuts: { at: number; end: number; replace: Buffer }[] = [];
  for (const [at, removed] of sections) {
    const r = new Reader(buf, at);
    const count = r.unsignedVarint();
    cuts.push({ at, end: r.offset, replace: uvarint(count - removed) });
  }
  for (const s of skipped) cuts.push({ at: s.start, end: s.end, replace: Buffer.alloc(0) });
  cuts.sort((a, b) => a.at - b.at);
  const parts: Buffer[] = [];
  let pos = 0;
  for (const c of cuts) {
    parts.push(buf.subarray(pos, c.at), c.replace);
    pos = c.end;
  }
  parts.push(buf.subarray(pos));
  return Buffer.concat(parts);
}

/** Byte equality with a readable failure: the first differing offset and the bytes around it. */
function expectSameBytes(actual: Buffer, expected: Buffer, what: string): void {
  if (actual.equals(expected)) return;
  let i = 0;
  while (i < actual.length && i < expected.length && actual[i] === expected[i]) i++;
  const around = (b: Buffer): string =>
    `${b.subarray(Math.max(0, i - 12), i).toString('hex')}|${b.subarray(i, i + 12).toString('hex')}`;
  expect.fail(`${what}: re-encoding differs at byte ${i} (lengths: re-encoded ${actual.length}, golden ` +
    `${expected.length}); golden ...${around(expected)}..., re-encoded ...${around(actual)}...`);
}

function checkUnknownTags(file: string, r: AuditReader, golden: Buffer): Buffer {
  expect(r.skipped.map((s) => s.tag), `unknown tagged fields in ${file} (list them in UNKNOWN_TAGS)`)
    .to.deep.equal(UNKNOWN_TAGS[file] ?? []);
  return r.skipped.length === 0 ? golden : withoutUnknownTags(golden, r.skipped);
}

function decodeRequest<T>(f: Fixture, file = f.request): { header: RequestHeader; body: T; reader: AuditReader } {
  const spec = getApiSpec(f.apiKey);
  if (spec === undefined) throw new Error(`API key ${f.apiKey} has no spec`);
  const reader = new AuditReader(load(file));
  const header = decodeRequestHeader(reader, requestHeaderVersion(f.apiKey, f.version));
  const body = spec.decodeRequest(reader, f.version) as T;
  return { header, body, reader };
}

function decodeResponse<T>(f: Fixture, version = f.version): { correlationId: number; body: T; reader: AuditReader } {
  const spec = getApiSpec(f.apiKey);
  if (spec === undefined || f.response === null) throw new Error(`${f.request}: no spec or no response`);
  const reader = new AuditReader(load(f.response));
  const { correlationId } = decodeResponseHeader(reader, responseHeaderVersion(f.apiKey, version));
  const body = spec.decodeResponse(reader, version) as T;
  return { correlationId, body, reader };
}

function fixture(client: string, api: string, version: number, variant: string | null = null): Fixture {
  const f = index.fixtures.find((x) => x.client === client && x.api === api && x.version === version && x.variant === variant);
  if (f === undefined) throw new Error(`no golden fixture ${client} ${api} v${version}${variant ? ` ${variant}` : ''}`);
  return f;
}

function label(f: Fixture): string {
  return `${f.client} ${f.api} v${f.version}${f.variant ? ` (${f.variant})` : ''}`;
}

describe('golden bytes from real clients', () => {
  it('index.json lists existing fixture files, every file is listed, every client has a version', () => {
    expect(index.fixtures.length).to.be.greaterThan(0);
    const listed = new Set<string>();
    for (const f of index.fixtures) {
      expect(index.clients[f.client], `version of ${f.client}`).to.be.a('string').and.not.equal('unknown');
      for (const file of [f.request, f.response]) {
        if (file === null) continue;
        expect(fs.existsSync(path.join(GOLDEN, file)), file).to.equal(true);
        listed.add(file);
      }
    }
    const onDisk = fs.readdirSync(GOLDEN, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .flatMap((d) => fs.readdirSync(path.join(GOLDEN, d.name)).map((n) => `${d.name}/${n}`));
    expect(onDisk.filter((file) => !listed.has(file)), 'fixture files not in index.json').to.deep.equal([]);
    for (const file of [...Object.keys(UNKNOWN_TAGS), ...Object.keys(TRAILING_BYTES)]) {
      expect(listed.has(file), `UNKNOWN_TAGS / TRAILING_BYTES entry ${file}`).to.equal(true);
    }
  });

  describe('requests decode completely and re-encode to the same bytes', () => {
    for (const f of index.fixtures) {
      if (isVersionProbe(f)) continue;
      it(label(f), () => {
        const golden = load(f.request);
        const spec = getApiSpec(f.apiKey);
        expect(spec, `spec of API key ${f.apiKey}`).to.not.equal(undefined);
        expect(spec!.name).to.equal(f.api);
        const hv = requestHeaderVersion(f.apiKey, f.version);
        const { header, body, reader } = decodeRequest<unknown>(f);
        expect(header.requestApiKey).to.equal(f.apiKey);
        expect(header.requestApiVersion).to.equal(f.version);
        const trailing = TRAILING_BYTES[f.request];
        const left = golden.subarray(reader.offset).toString('hex');
        expect(left, `bytes left after decoding ${f.request}`).to.equal(trailing?.hex ?? '');
        const expected = checkUnknownTags(f.request, reader, golden.subarray(0, reader.offset));
        const w = new Writer();
        encodeRequestHeader(w, header, hv);
        spec!.encodeRequest(w, body, f.version);
        expectSameBytes(w.finishOne(), expected, f.request);
      });
    }
  });

  describe('responses (what Fjord sent) decode completely and re-encode to the same bytes', () => {
    for (const f of index.fixtures) {
      if (f.response === null || isVersionProbe(f)) continue;
      it(label(f), () => {
        const golden = load(f.response!);
        const { correlationId, body, reader } = decodeResponse<unknown>(f);
        expect(correlationId, 'correlation id of the request').to.equal(load(f.request).readInt32BE(4));
        expect(reader.remaining(), `bytes left after decoding ${f.response}`).to.equal(0);
        const expected = checkUnknownTags(f.response!, reader, golden);
        const w = new Writer();
        encodeResponseHeader(w, { correlationId }, responseHeaderVersion(f.apiKey, f.version));
        getApiSpec(f.apiKey)!.encodeResponse(w, body, f.version);
        expectSameBytes(w.finishOne(), expected, f.response!);
      });
    }
  });

  describe('version probes above our range (KIP-511)', () => {
    const probes = index.fixtures.filter(isVersionProbe);
    for (const f of probes) {
      it(`${label(f)}: only ApiVersions; answered UNSUPPORTED_VERSION at v0 with our ranges; the client retried`, () => {
        expect(f.apiKey, 'only ApiVersions may be sent above our range').to.equal(ApiKey.ApiVersions);
        // The header is still ours to read (v2: the probe version is flexible).
        const r = new Reader(load(f.request));
        const header = decodeRequestHeader(r, requestHeaderVersion(f.apiKey, f.version));
        expect(header.requestApiVersion).to.equal(f.version);
        expect(header.clientId).to.be.a('string').and.not.equal('');
        // The answer: ApiVersions v0, error 35, our ranges; and it re-encodes to the same bytes.
        expect(f.response, 'the broker answered the probe').to.not.equal(null);
        const golden = load(f.response!);
        const { correlationId, body, reader } = decodeResponse<ApiVersionsResponse>(f, 0);
        expect(correlationId).to.equal(header.correlationId);
        expect(reader.remaining()).to.equal(0);
        expect(body.errorCode).to.equal(35);
        // Our ApiVersions range as it was at the capture: below the probe, and within what we serve now.
        const av = body.apiKeys.find((k) => k.apiKey === ApiKey.ApiVersions);
        expect(av!.maxVersion).to.be.below(f.version).and.at.most(apiVersions.maxVersion);
        const w = new Writer();
        encodeResponseHeader(w, { correlationId }, 0);
        getApiSpec(f.apiKey)!.encodeResponse(w, body, 0);
        expectSameBytes(w.finishOne(), golden, f.response!);
        // ... and the client came back at the version we offered.
        expect(index.fixtures.some((x) => x.client === f.client && x.apiKey === f.apiKey && x.version === av!.maxVersion),
          `${f.client} retried ApiVersions at v${av!.maxVersion}`).to.equal(true);
      });
    }
  });

  describe('decoded values are the ones the clients meant', () => {
    const versionOf = (client: string, re: RegExp): string => {
      const m = re.exec(index.clients[client]);
      if (m === null) throw new Error(`no version in ${index.clients[client]}`);
      return m[1];
    };

    it('kcat: ClientSoftwareName "librdkafka"; a brokers-only Metadata first, then all topics (null)', () => {
      const av = decodeRequest<ApiVersionsRequest>(fixture('kcat', 'ApiVersions', 3));
      expect(av.header.clientId).to.equal('rdkafka');
      expect(av.body.clientSoftwareName).to.equal('librdkafka');
      expect(av.body.clientSoftwareVersion).to.equal(versionOf('kcat', /librdkafka (\S+)\)/));
      expect(decodeRequest<MetadataRequest>(fixture('kcat', 'Metadata', 4)).body.topics).to.deep.equal([]);
      const all = decodeRequest<MetadataRequest>(fixture('kcat', 'Metadata', 4, 'all-topics')).body;
      expect(all.topics).to.equal(null);
      expect(all.allowAutoTopicCreation).to.equal(true);
    });

    it('confluent-kafka: software name and version; CreateTopics, DescribeConfigs, DeleteTopics carry the script\'s values', () => {
      const p = index.params['confluent-kafka'];
      const av = decodeRequest<ApiVersionsRequest>(fixture('confluent-kafka', 'ApiVersions', 3));
      expect(av.header.clientId).to.equal('fjord-golden-confluent');
      expect(av.body.clientSoftwareName).to.equal('confluent-kafka-python');
      const [py, rd] = /^confluent-kafka (\S+) \(librdkafka (\S+)\)$/.exec(index.clients['confluent-kafka'])!.slice(1);
      expect(av.body.clientSoftwareVersion).to.equal(`${py}-rdkafka-${rd}`);

      const ct = fixture('confluent-kafka', 'CreateTopics', 4);
      const req = decodeRequest<CreateTopicsRequest>(ct).body;
      expect(req.topics.map((t) => ({ name: t.name, numPartitions: t.numPartitions, replicationFactor: t.replicationFactor })))
        .to.deep.equal([{ name: p.topic, numPartitions: p.partitions, replicationFactor: p.replicationFactor }]);
      expect(req.timeoutMs).to.equal(15000);
      const res = decodeResponse<CreateTopicsResponse>(ct).body;
      expect(res.topics.map((t) => [t.name, t.errorCode])).to.deep.equal([[p.topic, 0]]);

      const dc = decodeRequest<DescribeConfigsRequest>(fixture('confluent-kafka', 'DescribeConfigs', 1)).body;
      expect(dc.resources.map((r) => [r.resourceType, r.resourceName, r.configurationKeys])).to.deep.equal([[2, p.topic, null]]);
      const dcb = decodeRequest<DescribeConfigsRequest>(fixture('confluent-kafka', 'DescribeConfigs', 1, 'broker')).body;
      expect(dcb.resources.map((r) => [r.resourceType, r.resourceName])).to.deep.equal([[4, '0']]);
      expect(decodeRequest<DeleteTopicsRequest>(fixture('confluent-kafka', 'DeleteTopics', 4)).body.topicNames).to.deep.equal([p.topic]);
      // librdkafka#5049 (see TRAILING_BYTES): read as Kafka's broker reads it.
      const all = decodeRequest<MetadataRequest>(fixture('confluent-kafka', 'Metadata', 12, 'all-topics'));
      expect(all.body.topics).to.equal(null);
      expect(all.body.allowAutoTopicCreation).to.equal(false);
      expect(all.reader.remaining()).to.equal(3);
    });

    it('kafka-python: software name and version; CreateTopics, DescribeConfigs, DeleteTopics carry the script\'s values', () => {
      const p = index.params['kafka-python'];
      const av = decodeRequest<ApiVersionsRequest>(fixture('kafka-python', 'ApiVersions', 4));
      expect(av.header.clientId).to.equal('fjord-golden-kafka-python');
      expect(av.body.clientSoftwareName).to.equal('kafka-python');
      expect(av.body.clientSoftwareVersion).to.equal(versionOf('kafka-python', /^kafka-python (\S+)$/));
      const ct = decodeRequest<CreateTopicsRequest>(fixture('kafka-python', 'CreateTopics', 3)).body;
      expect(ct.topics.map((t) => [t.name, t.numPartitions, t.replicationFactor])).to.deep.equal([[p.topic, p.partitions, p.replicationFactor]]);
      const dc = decodeRequest<DescribeConfigsRequest>(fixture('kafka-python', 'DescribeConfigs', 2)).body;
      expect(dc.resources.map((r) => [r.resourceType, r.resourceName])).to.deep.equal([[2, p.topic]]);
      const dcb = decodeRequest<DescribeConfigsRequest>(fixture('kafka-python', 'DescribeConfigs', 2, 'broker')).body;
      expect(dcb.resources.map((r) => [r.resourceType, r.resourceName])).to.deep.equal([[4, '0']]);
      expect(decodeRequest<DeleteTopicsRequest>(fixture('kafka-python', 'DeleteTopics', 3)).body.topicNames).to.deep.equal([p.topic]);
    });

    it('java: ApiVersions v5 ClientSoftwareName "apache-kafka-java"; CreateTopics v7, DeleteTopics v6 by name, DescribeCluster v2, DescribeTopicPartitions', () => {
      const av = decodeRequest<ApiVersionsRequest>(fixture('java', 'ApiVersions', 5));
      expect(av.header.clientId).to.equal('fjord-compat-java');
      expect(av.body.clientSoftwareName).to.equal('apache-kafka-java');
      expect(av.body.clientSoftwareVersion).to.equal(versionOf('java', /^kafka-clients (\S+)$/));
      const ct = decodeRequest<CreateTopicsRequest>(fixture('java', 'CreateTopics', 7)).body;
      expect(ct.topics).to.have.length(1);
      expect(ct.topics[0].name).to.match(/^compat-java-\d+$/);
      expect([ct.topics[0].numPartitions, ct.topics[0].replicationFactor]).to.deep.equal([3, 1]);
      const dt = decodeRequest<DeleteTopicsRequest>(fixture('java', 'DeleteTopics', 6)).body;
      expect(dt.topics.map((t) => [t.name, t.topicId])).to.deep.equal([[ct.topics[0].name, '00000000000000000000000000000000']]);
      const dcl = decodeRequest<DescribeClusterRequest>(fixture('java', 'DescribeCluster', 2)).body;
      expect(dcl.endpointType).to.equal(1);
      expect(decodeRequest<MetadataRequest>(fixture('java', 'Metadata', 13, 'all-topics')).body.topics).to.equal(null);
      // the Admin's describeTopics asks DescribeTopicPartitions (a broker that serves it), for the topic it created
      const dtp = decodeRequest<DescribeTopicPartitionsRequest>(fixture('java', 'DescribeTopicPartitions', 0)).body;
      expect(dtp.topics.map((t) => t.name)).to.deep.equal([ct.topics[0].name]);
    });

    it('franz-go: kgo names itself in ApiVersions v5; CreateTopics v7 and DeleteTopics v6', () => {
      const av = decodeRequest<ApiVersionsRequest>(fixture('franz-go', 'ApiVersions', 5));
      expect(av.header.clientId).to.equal('kgo');
      expect(av.body.clientSoftwareName).to.equal('kgo');
      expect(av.body.clientSoftwareVersion).to.equal(versionOf('franz-go', /^franz-go (\S+)/));
      const ct = decodeRequest<CreateTopicsRequest>(fixture('franz-go', 'CreateTopics', 7)).body;
      expect(ct.topics.map((t) => [t.numPartitions, t.replicationFactor])).to.deep.equal([[3, 1]]);
      expect(ct.topics[0].name).to.match(/^compat-go-\d+$/);
      const dt = decodeRequest<DeleteTopicsRequest>(fixture('franz-go', 'DeleteTopics', 6)).body;
      expect(dt.topics.map((t) => t.name)).to.deep.equal([ct.topics[0].name]);
    });

    it('kafkajs: non-flexible versions; Metadata v6 for all topics (null); CreateTopics v3', () => {
      const md = decodeRequest<MetadataRequest>(fixture('kafkajs', 'Metadata', 6));
      expect(md.header.clientId).to.equal('fjord-compat-kafkajs');
      expect(md.body.topics).to.equal(null);
      const ct = decodeRequest<CreateTopicsRequest>(fixture('kafkajs', 'CreateTopics', 3)).body;
      expect(ct.topics.map((t) => [t.numPartitions, t.replicationFactor])).to.deep.equal([[3, 1]]);
      expect(ct.topics[0].name).to.match(/^compat-kafkajs-\d+$/);
    });
  });

  describe('the unknown-tag audit itself', () => {
    it('cuts an unknown tag out of a request and lowers its section count', () => {
      // ApiVersions v3 body: "a", "b", then a tag section with unknown tag 7 (2 bytes) -> our re-encoding lacks it.
      const golden = Buffer.from('0261' + '0262' + '01' + '07' + '02' + 'abcd', 'hex');
      const r = new AuditReader(golden);
      const body = getApiSpec(ApiKey.ApiVersions)!.decodeRequest(r, 3);
      expect(r.remaining()).to.equal(0);
      expect(r.skipped.map((s) => s.tag)).to.deep.equal([7]);
      const w = new Writer();
      getApiSpec(ApiKey.ApiVersions)!.encodeRequest(w, body, 3);
      expectSameBytes(w.finishOne(), withoutUnknownTags(golden, r.skipped), 'synthetic');
    });
  });
});
