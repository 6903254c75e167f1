/**
 * Compares our protocol-specs/ with Kafka's reference specs, wire-wise: the
 * message specs at ../shared/reference/kafka-message-specs/ relative to the
 * project root, and the coordinator-record specs inside the broker jars that
 * compat/lib/apache-kafka.sh fetches into the local Maven repository. Either
 * comparison is pending when its reference is absent. Differences must be
 * listed, with a reason, in test/protocol/reference-allowlist.json.
 */
import { expect } from 'chai';
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { RawField, RawSpec, ROOT, SPEC_DIR, loadSpecDir, parseSpec } from './spec-util';
import { SpecDifference, compareSpecs } from './spec-compare';

const REFERENCE_DIR = path.resolve(ROOT, '..', 'shared', 'reference', 'kafka-message-specs');
const ALLOWLIST_FILE = path.join(ROOT, 'test', 'protocol', 'reference-allowlist.json');

// Kafka keeps the records of __consumer_offsets and __transaction_state in its coordinator modules, not
// in kafka-clients (which the reference folder holds): artifact of org.apache.kafka -> specs it holds.
const COORDINATOR_RECORD_JARS: Record<string, string[]> = {
  'kafka-group-coordinator': ['OffsetCommitKey', 'OffsetCommitValue', 'GroupMetadataKey', 'GroupMetadataValue'],
  'kafka-transaction-coordinator': ['TransactionLogKey', 'TransactionLogValue'],
};
const COORDINATOR_RECORD_SPECS = new Set(Object.values(COORDINATOR_RECORD_JARS).flat());
const KAFKA_FETCH_SCRIPT = path.join(ROOT, 'compat', 'lib', 'apache-kafka.sh');
/** Maven's local repository; FJORD_MAVEN_REPO points elsewhere (e.g. at a missing directory, to see the pending case). */
const MAVEN_REPO = process.env.FJORD_MAVEN_REPO ?? path.join(os.homedir(), '.m2', 'repository');

function kafkaJar(artifact: string): string {
  // the Kafka release compat resolves, so that one fetch serves both
  const version = /^KAFKA_VERSION=(\S+)/m.exec(fs.readFileSync(KAFKA_FETCH_SCRIPT, 'utf8'))![1];
  return path.join(MAVEN_REPO, 'org', 'apache', 'kafka', artifact, version, `${artifact}-${version}.jar`);
}

/** The coordinator-record specs read out of Kafka's jars, or null when a jar is missing. */
function loadCoordinatorRecordSpecs(): Map<string, RawSpec> | null {
  const specs = new Map<string, RawSpec>();
  for (const [artifact, names] of Object.entries(COORDINATOR_RECORD_JARS)) {
    const jar = kafkaJar(artifact);
    if (!fs.existsSync(jar)) return null;
    for (const name of names) {
      specs.set(name, parseSpec(execFileSync('unzip', ['-p', jar, `common/message/${name}.json`], { encoding: 'utf8' })));
    }
  }
  return specs;
}

interface AllowEntry {
  spec: string;
  path: string;
  reason: string;
}

function loadAllowlist(): AllowEntry[] {
  const list = JSON.parse(fs.readFileSync(ALLOWLIST_FILE, 'utf8')) as unknown;
  if (!Array.isArray(list)) throw new Error(`${ALLOWLIST_FILE}: expected an array`);
  for (const e of list as AllowEntry[]) {
    if (typeof e.spec !== 'string' || typeof e.path !== 'string' || typeof e.reason !== 'string' || e.reason.trim() === '') {
      throw new Error(`${ALLOWLIST_FILE}: every entry needs spec, path and a non-empty reason: ${JSON.stringify(e)}`);
    }
  }
  return list as AllowEntry[];
}

/** Differences between our specs and the reference that are not allow-listed. */
export function unexpectedDifferences(
  ours: Map<string, RawSpec>,
  reference: Map<string, RawSpec>,
  allow: AllowEntry[],
): { unexpected: SpecDifference[]; unusedAllow: AllowEntry[] } {
  const all: SpecDifference[] = [];
  for (const [name, spec] of ours) {
    const ref = reference.get(name);
    if (!ref) {
      all.push({ spec: name, path: ':file', ours: 'present', reference: 'missing' });
      continue;
    }
    all.push(...compareSpecs(spec, ref));
  }
  const used = new Set<AllowEntry>();
  const unexpected = all.filter((d) => {
    const e = allow.find((a) => a.spec === d.spec && a.path === d.path);
    if (e) used.add(e);
    return !e;
  });
  return { unexpected, unusedAllow: allow.filter((a) => !used.has(a)) };
}

function fmt(d: SpecDifference): string {
  return `${d.spec} ${d.path}: ours ${d.ours} / reference ${d.reference}`;
}

const REQUIRED_API_KEYS = [
  0, 1, 2, 3,
  ...Array.from({ length: 51 - 8 + 1 }, (_, i) => 8 + i),
  55, 57, 60, 61, 64, 65, 66, 68, 69, 71, 72, 74, 75,
];

describe('protocol specs', () => {
  const ours = loadSpecDir(SPEC_DIR);
  const isCoordinatorRecord = (name: string) => COORDINATOR_RECORD_SPECS.has(name);
  const coordinatorRecords = new Map([...ours].filter(([name]) => isCoordinatorRecord(name)));
  const messages = new Map([...ours].filter(([name]) => !isCoordinatorRecord(name)));
  const allowlist = (wanted: boolean) => loadAllowlist().filter((a) => isCoordinatorRecord(a.spec) === wanted);

  it(`cover the API keys the broker serves (${REQUIRED_API_KEYS.length} APIs) plus both headers`, () => {
    const keys = (type: string) =>
      new Set([...ours.values()].filter((s) => s.type === type).map((s) => s.apiKey));
    const req = keys('request');
    const res = keys('response');
    const missing = REQUIRED_API_KEYS.filter((k) => !req.has(k) || !res.has(k));
    expect(missing, 'API keys without a request or response spec').to.deep.equal([]);
    expect(ours.has('RequestHeader') && ours.has('ResponseHeader')).to.equal(true);
    for (const [name, s] of ours) {
      if (s.type === 'request' || s.type === 'response') {
        expect(name.endsWith(s.type === 'request' ? 'Request' : 'Response'), name).to.equal(true);
        expect(ours.has(s.type === 'request' ? name.replace(/Request$/, 'Response') : name.replace(/Response$/, 'Request')), `pair of ${name}`).to.equal(true);
      }
    }
  });

  describe('compared with the Kafka reference specs', function () {
    let reference: Map<string, RawSpec> | null = null;

    before(function () {
      if (!fs.existsSync(REFERENCE_DIR)) {
        console.log(`    (reference specs not found at ${REFERENCE_DIR}: skipping the comparison)`);
        this.skip();
      }
      reference = loadSpecDir(REFERENCE_DIR);
    });

    it('every spec of ours exists in the reference and matches it wire-wise (or is allow-listed)', () => {
      const { unexpected, unusedAllow } = unexpectedDifferences(messages, reference!, allowlist(false));
      expect(unexpected.map(fmt), 'differences not in reference-allowlist.json').to.deep.equal([]);
      expect(unusedAllow.map((a) => `${a.spec} ${a.path}`), 'stale reference-allowlist.json entries').to.deep.equal([]);
    });

    it('catches deliberately altered specs', () => {
      const name = 'FetchRequest';
      const altered = new Map(ours);
      const spec = JSON.parse(JSON.stringify(ours.get(name))) as RawSpec;
      const topics = spec.fields.find((f) => f.name === 'Topics')!;
      const partitions = topics.fields!.find((f) => f.name === 'Partitions')!;
      const epoch = partitions.fields!.find((f) => f.name === 'LastFetchedEpoch')!;
      epoch.versions = '11+'; // version change, nested
      const replicaDir = partitions.fields!.find((f) => f.name === 'ReplicaDirectoryId')!;
      replicaDir.tag = 1; // tag change
      const clusterId = spec.fields.find((f) => f.name === 'ClusterId')!;
      clusterId.default = ''; // default change
      spec.flexibleVersions = '11+';
      // field order change
      const i = spec.fields.findIndex((f) => f.name === 'MaxWaitMs');
      [spec.fields[i], spec.fields[i + 1]] = [spec.fields[i + 1], spec.fields[i]];
      altered.set(name, spec);

      const { unexpected } = unexpectedDifferences(altered, reference!, []);
      const paths = unexpected.map((d) => `${d.spec} ${d.path}`);
      expect(paths).to.include.members([
        'FetchRequest Topics.Partitions.LastFetchedEpoch:versions',
        'FetchRequest Topics.Partitions.ReplicaDirectoryId:tag',
        'FetchRequest ClusterId:default',
        'FetchRequest :flexibleVersions',
        'FetchRequest :fields',
      ]);
      // an allow-list entry silences exactly one difference
      const allow = [{ spec: name, path: ':flexibleVersions', reason: 'test' }];
      const again = unexpectedDifferences(altered, reference!, allow);
      expect(again.unexpected.length).to.equal(unexpected.length - 1);
      // a spec unknown to the reference is reported
      const extra = new Map(messages);
      extra.set('MadeUpRequest', { ...ours.get(name)!, name: 'MadeUpRequest' });
      expect(unexpectedDifferences(extra, reference!, allowlist(false)).unexpected.map((d) => `${d.spec} ${d.path}`)).to.deep.equal([
        'MadeUpRequest :file',
      ]);
    });

    it('catches nullable, type, tagged-version, ignorable, field-flexibleVersions and commonStruct changes', () => {
      const mutate = (specName: string, fn: (s: RawSpec) => void): string[] => {
        const s = JSON.parse(JSON.stringify(ours.get(specName))) as RawSpec;
        fn(s);
        return compareSpecs(s, reference!.get(specName)!).map((d) => d.path);
      };
      expect(mutate('MetadataResponse', (s) => (s.fields[1].fields![3].nullableVersions = '2+'))).to.deep.equal(['Brokers.Rack:nullableVersions']);
      expect(mutate('MetadataResponse', (s) => (s.fields[0].type = 'int64'))).to.include('ThrottleTimeMs:type');
      expect(mutate('ApiVersionsResponse', (s) => (s.fields[4].taggedVersions = '4+'))).to.deep.equal(['FinalizedFeaturesEpoch:taggedVersions']);
      expect(mutate('MetadataResponse', (s) => (s.fields[0].ignorable = false))).to.deep.equal(['ThrottleTimeMs:ignorable']);
      expect(mutate('RequestHeader', (s) => delete s.fields[3].flexibleVersions)).to.deep.equal(['ClientId:flexibleVersions']);
      expect(mutate('ConsumerGroupDescribeResponse', (s) => s.commonStructs![0].fields.pop())).to.deep.equal(['TopicPartitions:fields']);
      expect(mutate('ConsumerGroupDescribeResponse', (s) => (s.commonStructs![0].fields[1].versions = '1+'))).to.deep.equal([
        'TopicPartitions.TopicName:versions',
      ]);
      // equivalent spellings are not differences
      expect(mutate('MetadataResponse', (s) => (s.fields[3].default = '-0x1'))).to.deep.equal([]);
      expect(mutate('FetchRequest', (s) => (s.fields.find((f) => f.name === 'MaxBytes')!.default = '2147483647'))).to.deep.equal([]);
    });
  });

  describe("compared with Kafka's coordinator-record specs (in its broker jars)", function () {
    let reference: Map<string, RawSpec> | null = null;

    before(function () {
      reference = loadCoordinatorRecordSpecs();
      if (!reference) {
        console.log(`    (Kafka's jars not found under ${MAVEN_REPO}: run compat/lib/apache-kafka.sh fetch to compare the coordinator records)`);
        this.skip();
      }
    });

    it(`${[...COORDINATOR_RECORD_SPECS].join(', ')} match Kafka's wire-wise (or are allow-listed)`, () => {
      expect([...coordinatorRecords.keys()].sort()).to.deep.equal([...COORDINATOR_RECORD_SPECS].sort());
      const { unexpected, unusedAllow } = unexpectedDifferences(coordinatorRecords, reference!, allowlist(true));
      expect(unexpected.map(fmt), 'differences not in reference-allowlist.json').to.deep.equal([]);
      expect(unusedAllow.map((a) => `${a.spec} ${a.path}`), 'stale reference-allowlist.json entries').to.deep.equal([]);
    });

    it('catches altered coordinator-record specs (a tagged field without versions has its taggedVersions)', () => {
      const mutate = (specName: string, fn: (s: RawSpec) => void): string[] => {
        const s = JSON.parse(JSON.stringify(ours.get(specName))) as RawSpec;
        fn(s);
        return compareSpecs(s, reference!.get(specName)!).map((d) => d.path).filter((p) => p !== ':type' && p !== ':apiKey');
      };
      const field = (fields: RawField[], name: string) => fields.find((f) => f.name === name)!;
      expect(mutate('TransactionLogValue', (s) => (field(s.fields, 'NextProducerId').versions = '2+'))).to.deep.equal(['NextProducerId:versions']);
      expect(mutate('TransactionLogValue', (s) => delete field(s.fields, 'NextProducerId').versions)).to.deep.equal([]);
      expect(mutate('GroupMetadataValue', (s) => delete field(s.commonStructs![0].fields, 'rebalanceTimeout').default)).to.deep.equal([
        'MemberMetadata.rebalanceTimeout:default',
      ]);
    });
  });
});
