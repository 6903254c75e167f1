/**
 * Every message, every valid version: build sample values from the spec
 * (non-default values for every field present in the version, nested arrays,
 * tagged fields, nulls where nullable, omitted optional fields), encode,
 * decode, compare, re-encode, compare bytes.
 */
import { expect } from 'chai';
import type * as generated from '../../src/protocol/generated';
import { decodeApiVersionsResponse, encodeApiVersionsResponse } from '../../src/protocol/generated/ApiVersionsResponse';
import { decodeDescribeTopicPartitionsRequest, encodeDescribeTopicPartitionsRequest } from '../../src/protocol/generated/DescribeTopicPartitionsRequest';
import { encodeFetchRequest } from '../../src/protocol/generated/FetchRequest';
import { decodeFetchResponse, encodeFetchResponse } from '../../src/protocol/generated/FetchResponse';
import { decodeMetadataResponse, encodeMetadataResponse } from '../../src/protocol/generated/MetadataResponse';
import { decodeProduceRequest, encodeProduceRequest } from '../../src/protocol/generated/ProduceRequest';
import { ProtocolError, Reader, UnsupportedVersionError, Writer, ZERO_COPY_THRESHOLD } from '../../src/protocol/primitives';
import { Obj, RawSpec, SPEC_DIR, SampleOptions, camel, defaultValue, inRange, loadSpecDir, parseRange, sampleMessage, versionsOf } from './spec-util';

type Encode = (w: Writer, m: unknown, version: number) => void;
type Decode = (r: Reader, version: number) => unknown;

function codec(name: string): { encode: Encode; decode: Decode } {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const mod = require(`../../src/protocol/generated/${name}`) as Record<string, unknown>;
  const encode = mod[`encode${name}`];
  const decode = mod[`decode${name}`];
  if (typeof encode !== 'function' || typeof decode !== 'function') throw new Error(`no codec generated for ${name}`);
  return { encode: encode as Encode, decode: decode as Decode };
}

function encodeToBuffer(encode: Encode, m: unknown, version: number, initialSize?: number): Buffer {
  const w = new Writer(initialSize);
  encode(w, m, version);
  return Buffer.concat(w.finish());
}

function hasBytes(spec: RawSpec): boolean {
  return JSON.stringify(spec).match(/"type":\s*"(bytes|records)"/) !== null;
}

const specs = loadSpecDir(SPEC_DIR);

const MODES: { name: string; opts: SampleOptions; onlyIf?: (s: RawSpec) => boolean }[] = [
  { name: 'all fields set', opts: { nulls: false, minimal: false, bytesSize: 5 } },
  { name: 'nulls where nullable', opts: { nulls: true, minimal: false, bytesSize: 0 } },
  { name: 'optional fields omitted', opts: { nulls: false, minimal: true, bytesSize: 3 } },
  { name: 'large bytes (zero-copy path)', opts: { nulls: false, minimal: false, bytesSize: ZERO_COPY_THRESHOLD * 3 }, onlyIf: hasBytes },
];

describe('generated codecs: round trip of every message at every version', () => {
  let cases = 0;
  after(() => {
    // visible in the mocha output through the test titles; this guards against silently generating nothing
    expect(cases).to.be.greaterThan(400);
  });

  for (const [name, spec] of specs) {
    describe(name, () => {
      const { encode, decode } = codec(name);
      for (const version of versionsOf(spec)) {
        for (const mode of MODES) {
          if (mode.onlyIf && !mode.onlyIf(spec)) continue;
          it(`v${version}: ${mode.name}`, () => {
            cases++;
            const [input, expected] = sampleMessage(spec, version, mode.opts);
            const bytes = encodeToBuffer(encode, input, version, 32);
            const r = new Reader(bytes);
            const decoded = decode(r, version);
            expect(r.remaining(), 'bytes left after decoding').to.equal(0);
            expect(decoded).to.deep.equal(expected);
            const again = encodeToBuffer(encode, decoded, version);
            expect(again.equals(bytes), 're-encoded bytes differ').to.equal(true);
          });
        }
        it(`v${version}: truncated input throws ProtocolError`, () => {
          const [input] = sampleMessage(spec, version, { nulls: false, minimal: false, bytesSize: 4 });
          const bytes = encodeToBuffer(encode, input, version);
          const step = bytes.length <= 300 ? 1 : Math.ceil(bytes.length / 300);
          for (let len = 0; len < bytes.length; len += step) {
            expect(() => decode(new Reader(bytes.subarray(0, len)), version), `prefix of ${len}/${bytes.length} bytes`).to.throw(ProtocolError);
          }
        });
      }

      it('rejects versions outside validVersions', () => {
        const range = parseRange(spec.validVersions);
        const w = new Writer();
        expect(() => encode(w, {}, range.hi + 1)).to.throw(UnsupportedVersionError);
        expect(() => decode(new Reader(Buffer.alloc(64)), range.hi + 1)).to.throw(UnsupportedVersionError);
        expect(() => decode(new Reader(Buffer.alloc(64)), -1)).to.throw(UnsupportedVersionError);
      });

      it('non-default values of fields absent from a version: error unless ignorable', () => {
        for (const version of versionsOf(spec)) {
          const [base] = sampleMessage(spec, version, { nulls: false, minimal: false, bytesSize: 2 });
          for (const f of spec.fields) {
            if (inRange(version, parseRange(f.versions))) continue;
            // a value that surely differs from the default: take one from a version where the field exists
            const donor = versionsOf(spec).find((v) => inRange(v, parseRange(f.versions)));
            if (donor === undefined) continue;
            const [donorValue] = sampleMessage(spec, donor, { nulls: false, minimal: false, bytesSize: 2 });
            const value = donorValue[camel(f.name)];
            const m: Obj = { ...base, [camel(f.name)]: value };
            const w = new Writer();
            if (f.ignorable) {
              encode(w, m, version);
              const decoded = decode(new Reader(w.finishOne()), version) as Obj;
              expect(decoded[camel(f.name)], `${f.name} at v${version}`).to.deep.equal(defaultValue(spec, f));
            } else {
              expect(() => encode(w, m, version), `${f.name} at v${version}`).to.throw(UnsupportedVersionError);
            }
          }
        }
      });
    });
  }
});

describe('generated codecs: specific behaviour', () => {
  it('throws for a non-default non-ignorable nested field absent from the version', () => {
    const m: generated.FetchRequest = {
      maxWaitMs: 1,
      minBytes: 1,
      topics: [{ topic: 't', partitions: [{ partition: 0, fetchOffset: 0n, partitionMaxBytes: 1, lastFetchedEpoch: 3 }] }],
      forgottenTopicsData: [],
    };
    expect(() => encodeFetchRequest(new Writer(), m, 11)).to.throw(UnsupportedVersionError, /lastFetchedEpoch/);
    expect(() => encodeFetchRequest(new Writer(), m, 12)).not.to.throw();
  });

  it('throws when null is given for a field not nullable in the version', () => {
    const topic: generated.MetadataResponseTopic = { errorCode: 0, name: null, partitions: [] };
    const m: generated.MetadataResponse = { brokers: [], topics: [topic] };
    expect(() => encodeMetadataResponse(new Writer(), m, 11)).to.throw(ProtocolError, /not nullable/);
    const w = new Writer();
    encodeMetadataResponse(w, m, 12);
    expect(decodeMetadataResponse(new Reader(w.finishOne()), 12).topics[0].name).to.equal(null);
  });

  it('rejects null on the wire for non-nullable fields', () => {
    // MetadataResponse v1: brokers array null
    const bytes = Buffer.from('ffffffff', 'hex');
    expect(() => decodeMetadataResponse(new Reader(bytes), 1)).to.throw(ProtocolError);
  });

  it('fills defaults for fields absent from the decoded version', () => {
    const w = new Writer();
    encodeMetadataResponse(w, { brokers: [{ nodeId: 1, host: 'h', port: 9092 }], topics: [] }, 0);
    const d = decodeMetadataResponse(new Reader(w.finishOne()), 0);
    expect(d).to.deep.equal({
      throttleTimeMs: 0,
      brokers: [{ nodeId: 1, host: 'h', port: 9092, rack: null }],
      clusterId: null,
      controllerId: -1,
      topics: [],
      clusterAuthorizedOperations: -2147483648,
      errorCode: 0,
    });
  });

  it('skips unknown tagged fields and keeps known ones', () => {
    // ApiVersionsResponse v3: error 0, api_keys [] (compact 1), throttle 0,
    // tagged: tag 1 (FinalizedFeaturesEpoch, 8 bytes) + unknown tag 7 (3 bytes) + unknown tag 100 (0 bytes)
    const bytes = Buffer.from('0000' + '01' + '00000000' + '03' + '0108' + '0000000000000005' + '0703' + 'aabbcc' + '6400', 'hex');
    const r = new Reader(bytes);
    const d = decodeApiVersionsResponse(r, 3);
    expect(r.remaining()).to.equal(0);
    expect(d.finalizedFeaturesEpoch).to.equal(5n);
    expect(d.supportedFeatures).to.deep.equal([]);
    // re-encoding drops the unknown tags
    const w = new Writer();
    encodeApiVersionsResponse(w, d, 3);
    expect(w.finishOne().toString('hex')).to.equal('0000' + '01' + '00000000' + '01' + '0108' + '0000000000000005');
  });

  it('rejects a known tagged field whose size does not match its content', () => {
    // ZkMigrationReady (tag 3, bool) claiming 2 bytes
    const bytes = Buffer.from('0000' + '01' + '00000000' + '01' + '0302' + '0100', 'hex');
    expect(() => decodeApiVersionsResponse(new Reader(bytes), 3)).to.throw(ProtocolError, /size mismatch/);
  });

  it('writes tagged fields in tag order, only when different from the default', () => {
    const w = new Writer();
    encodeApiVersionsResponse(w, { errorCode: 0, apiKeys: [], zkMigrationReady: true, finalizedFeaturesEpoch: -1n }, 3);
    expect(w.finishOne().toString('hex')).to.equal('0000' + '01' + '00000000' + '01' + '0301' + '01');
  });

  it('treats a tagged struct equal to its default as absent', () => {
    const part: generated.FetchResponsePartitionData = {
      partitionIndex: 0,
      errorCode: 0,
      highWatermark: 0n,
      records: null,
      currentLeader: { leaderId: -1, leaderEpoch: -1 },
    };
    const m: generated.FetchResponse = { responses: [{ topicId: '0'.repeat(32), partitions: [part] }] };
    const w1 = new Writer();
    encodeFetchResponse(w1, m, 13);
    const w2 = new Writer();
    encodeFetchResponse(w2, { responses: [{ topicId: '0'.repeat(32), partitions: [{ ...part, currentLeader: undefined }] }] }, 13);
    expect(w1.finishOne().equals(w2.finishOne())).to.equal(true);
    // and a tagged struct that differs is written and read back
    const w3 = new Writer();
    encodeFetchResponse(w3, { responses: [{ topicId: '0'.repeat(32), partitions: [{ ...part, currentLeader: { leaderId: 2, leaderEpoch: 7 } }] }] }, 13);
    const d = decodeFetchResponse(new Reader(w3.finishOne()), 13);
    expect(d.responses[0].partitions[0].currentLeader).to.deep.equal({ leaderId: 2, leaderEpoch: 7 });
    // in v11 (not flexible) it cannot be expressed, and CurrentLeader is not ignorable
    expect(() =>
      encodeFetchResponse(new Writer(), { responses: [{ topic: 't', partitions: [{ ...part, currentLeader: { leaderId: 2, leaderEpoch: 7 } }] }] }, 11),
    ).to.throw(UnsupportedVersionError);
  });

  it('nullable struct fields use an int8 presence marker', () => {
    const w = new Writer();
    encodeDescribeTopicPartitionsRequest(w, { topics: [], cursor: { topicName: 'a', partitionIndex: 2 } }, 0);
    expect(w.finishOne().toString('hex')).to.equal('01' + '000007d0' + '01' + '0261' + '00000002' + '00' + '00');
    const w2 = new Writer();
    encodeDescribeTopicPartitionsRequest(w2, { topics: [] }, 0);
    const b = w2.finishOne();
    expect(b.toString('hex')).to.equal('01' + '000007d0' + 'ff' + '00');
    expect(decodeDescribeTopicPartitionsRequest(new Reader(b), 0).cursor).to.equal(null);
  });

  it('decodes bytes/records as views of the input buffer', () => {
    const records = Buffer.alloc(2000, 0x5a);
    const w = new Writer();
    encodeProduceRequest(w, { acks: -1, timeoutMs: 1000, topicData: [{ name: 't', partitionData: [{ index: 0, records }] }] }, 9);
    const chunks = w.finish();
    expect(chunks.some((c) => c === records), 'records are not copied on encode').to.equal(true);
    const bytes = Buffer.concat(chunks);
    const d = decodeProduceRequest(new Reader(bytes), 9);
    const got = d.topicData[0].partitionData[0].records;
    expect(got).to.not.equal(null);
    expect(got!.buffer).to.equal(bytes.buffer);
    expect(got!.equals(records)).to.equal(true);
  });
});
