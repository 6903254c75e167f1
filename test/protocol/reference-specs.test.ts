/**
 * Compares our protocol-specs/ with Kafka's reference specs, wire-wise and version by version
 * (test/protocol/spec-compare.ts): each version of ours against Kafka 4.4.0's specs when 4.4.0
 * serves it, else against the late-2024 snapshot, which keeps the old versions Kafka 4.0 dropped
 * and older clients still send (both under ../shared/reference/ relative to the project root); and
 * the coordinator-record specs against those inside the broker jars that compat/lib/apache-kafka.sh
 * fetches into the local Maven repository. Either comparison is pending when its reference is absent.
 * Differences must be listed, with a reason, in test/protocol/reference-allowlist.json.
 */
import { expect } from 'chai';
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { RawField, RawSpec, ROOT, SPEC_DIR, inRange, loadSpecDir, parseRange, parseSpec } from './spec-util';
import { Reference, SpecDifference, compareWithReferences, formatDifferences } from './spec-compare';

const REFERENCE_ROOT = path.resolve(ROOT, '..', 'shared', 'reference');
/** Newest first: a version of ours is compared with the first of these that serves it. */
const MESSAGE_REFERENCES = [
  { name: 'Kafka 4.4.0', dir: path.join(REFERENCE_ROOT, 'kafka-4.4.0-message-specs') },
  { name: 'Kafka trunk 2024-10-25', dir: path.join(REFERENCE_ROOT, 'kafka-message-specs') },
];
const ALLOWLIST_FILE = path.join(ROOT, 'test', 'protocol', 'reference-allowlist.json');

// Kafka keeps the records of __consumer_offsets and __transaction_state in its coordinator modules, not
// in kafka-clients (which the reference folders hold): artifact of org.apache.kafka -> specs it holds.
const COORDINATOR_RECORD_JARS: Record<string, string[]> = {
  'kafka-group-coordinator': [
    'OffsetCommitKey', 'OffsetCommitValue', 'GroupMetadataKey', 'GroupMetadataValue',
    'ConsumerGroupMetadataKey', 'ConsumerGroupMetadataValue', 'ConsumerGroupMemberMetadataKey', 'ConsumerGroupMemberMetadataValue',
    'ConsumerGroupTargetAssignmentMetadataKey', 'ConsumerGroupTargetAssignmentMetadataValue',
    'ConsumerGroupTargetAssignmentMemberKey', 'ConsumerGroupTargetAssignmentMemberValue',
    'ConsumerGroupCurrentMemberAssignmentKey', 'ConsumerGroupCurrentMemberAssignmentValue',
    'ConsumerGroupRegularExpressionKey', 'ConsumerGroupRegularExpressionValue',
  ],
  'kafka-transaction-coordinator': ['TransactionLogKey', 'TransactionLogValue'],
  'kafka-share-coordinator': ['ShareSnapshotKey', 'ShareSnapshotValue', 'ShareUpdateKey', 'ShareUpdateValue'],
};
const COORDINATOR_RECORD_SPECS = new Set(Object.values(COORDINATOR_RECORD_JARS).flat());
const KAFKA_FETCH_SCRIPT = path.join(ROOT, 'compat', 'lib', 'apache-kafka.sh');
/** Maven's local repository; FJORD_MAVEN_REPO points elsewhere (e.g. at a missing directory, to see the pending case). */
const MAVEN_REPO = process.env.FJORD_MAVEN_REPO ?? path.join(os.homedir(), '.m2', 'repository');

/** The Kafka release compat resolves, so that one fetch serves both. */
function kafkaVersion(): string {
  return /^KAFKA_VERSION=(\S+)/m.exec(fs.readFileSync(KAFKA_FETCH_SCRIPT, 'utf8'))![1];
}

function kafkaJar(artifact: string): string {
  const version = kafkaVersion();
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
  /** the versions of ours it covers (e.g. "0-2"); absent: every version, and what is not per version */
  versions?: string;
  reason: string;
}

function loadAllowlist(): AllowEntry[] {
  const list = JSON.parse(fs.readFileSync(ALLOWLIST_FILE, 'utf8')) as unknown;
  if (!Array.isArray(list)) throw new Error(`${ALLOWLIST_FILE}: expected an array`);
  for (const e of list as AllowEntry[]) {
    if (typeof e.spec !== 'string' || typeof e.path !== 'string' || typeof e.reason !== 'string' || e.reason.trim() === '') {
      throw new Error(`${ALLOWLIST_FILE}: every entry needs spec, path and a non-empty reason: ${JSON.stringify(e)}`);
    }
    if (e.versions !== undefined) parseRange(e.versions); // throws on a malformed range
  }
  return list as AllowEntry[];
}

function allows(a: AllowEntry, d: SpecDifference): boolean {
  if (a.spec !== d.spec || a.path !== d.path) return false;
  if (a.versions === undefined) return true;
  return d.version !== null && inRange(d.version, parseRange(a.versions));
}

/** Differences between our specs and the references that are not allow-listed. */
export function unexpectedDifferences(
  ours: Map<string, RawSpec>,
  references: Reference[],
  allow: AllowEntry[],
): { unexpected: SpecDifference[]; unusedAllow: AllowEntry[] } {
  const all = [...ours.values()].flatMap((spec) => compareWithReferences(spec, references));
  const used = new Set<AllowEntry>();
  const unexpected = all.filter((d) => {
    const e = allow.find((a) => allows(a, d));
    if (e) used.add(e);
    return !e;
  });
  return { unexpected, unusedAllow: allow.filter((a) => !used.has(a)) };
}

function where(diffs: SpecDifference[]): string[] {
  return formatDifferences(diffs, { where: true });
}

const REQUIRED_API_KEYS = [
  0, 1, 2, 3,
  ...Array.from({ length: 51 - 8 + 1 }, (_, i) => 8 + i),
  55, 57, 60, 61, 64, 65, 66, 68, 69, 71, 72, 74, 75, 88, 89, 93,
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

  describe("compared with Kafka's message specs (4.4.0, and the 2024 snapshot for older versions)", function () {
    let references: Reference[] = [];
    const withReferences = (fn: (s: RawSpec) => void, specName: string): SpecDifference[] => {
      const s = JSON.parse(JSON.stringify(ours.get(specName))) as RawSpec;
      fn(s);
      return compareWithReferences(s, references);
    };

    before(function () {
      const missing = MESSAGE_REFERENCES.filter((r) => !fs.existsSync(r.dir));
      if (missing.length > 0) {
        console.log(`    (reference specs not found at ${missing.map((r) => r.dir).join(', ')}: skipping the comparison)`);
        this.skip();
      }
      references = MESSAGE_REFERENCES.map((r) => ({ name: r.name, specs: loadSpecDir(r.dir) }));
    });

    it('every version of every spec of ours matches a reference wire-wise (or is allow-listed)', () => {
      const { unexpected, unusedAllow } = unexpectedDifferences(messages, references, allowlist(false));
      expect(formatDifferences(unexpected), 'differences not in reference-allowlist.json').to.deep.equal([]);
      expect(unusedAllow.map((a) => `${a.spec} ${a.path}${a.versions ? ` v${a.versions}` : ''}`), 'stale reference-allowlist.json entries').to.deep.equal([]);
    });

    it('catches deliberately altered specs, at the versions they differ', () => {
      const name = 'FetchRequest';
      const altered = new Map(messages);
      const spec = JSON.parse(JSON.stringify(ours.get(name))) as RawSpec;
      const topics = spec.fields.find((f) => f.name === 'Topics')!;
      const partitions = topics.fields!.find((f) => f.name === 'Partitions')!;
      const epoch = partitions.fields!.find((f) => f.name === 'LastFetchedEpoch')!;
      epoch.versions = '11+'; // version change, nested
      const replicaDir = partitions.fields!.find((f) => f.name === 'ReplicaDirectoryId')!;
      replicaDir.tag = 2; // tag change
      const clusterId = spec.fields.find((f) => f.name === 'ClusterId')!;
      clusterId.default = ''; // default change
      spec.flexibleVersions = '11+';
      // field order change
      const i = spec.fields.findIndex((f) => f.name === 'MaxWaitMs');
      [spec.fields[i], spec.fields[i + 1]] = [spec.fields[i + 1], spec.fields[i]];
      altered.set(name, spec);

      const { unexpected } = unexpectedDifferences(altered, references, []);
      expect(where(unexpected)).to.include.members([
        'FetchRequest v11 Topics.Partitions:fields',
        'FetchRequest v17-18 Topics.Partitions.ReplicaDirectoryId:tagged',
        'FetchRequest v0-18 ClusterId:default',
        'FetchRequest v11 :flexible',
        'FetchRequest v0-18 :fields',
      ]);
      // versions Fjord serves that 4.4.0 dropped are compared with the 2024 snapshot
      const referenceAt = (v: number) => unexpected.find((d) => d.path === ':fields' && d.version === v)?.referenceName;
      expect([0, 3, 4, 18].map(referenceAt)).to.deep.equal(['Kafka trunk 2024-10-25', 'Kafka trunk 2024-10-25', 'Kafka 4.4.0', 'Kafka 4.4.0']);
      // an allow-list entry silences one difference, over the versions it names
      const allow = [{ spec: name, path: ':fields', versions: '0-3', reason: 'test' }];
      const again = unexpectedDifferences(altered, references, allow).unexpected;
      expect(unexpected.length - again.length).to.equal(4);
      expect(where(again)).to.include('FetchRequest v4-18 :fields');
      // a spec unknown to the references is reported
      const extra = new Map(messages);
      extra.set('MadeUpRequest', { ...ours.get(name)!, name: 'MadeUpRequest' });
      expect(where(unexpectedDifferences(extra, references, allowlist(false)).unexpected)).to.deep.equal(['MadeUpRequest :file']);
    });

    it('catches a version no reference serves, and a newer version ours lacks', () => {
      expect(where(withReferences((s) => (s.validVersions = '0-19'), 'FetchRequest'))).to.deep.equal(['FetchRequest v19 :validVersions']);
      expect(where(withReferences((s) => (s.validVersions = '0-17'), 'FetchRequest'))).to.deep.equal(['FetchRequest :maxVersion']);
      // the old versions' own fields are checked against the snapshot: ListOffsets v0's MaxNumOffsets
      expect(where(withReferences((s) => {
        const partitions = s.fields.find((f) => f.name === 'Topics')!.fields!.find((f) => f.name === 'Partitions')!;
        partitions.fields = partitions.fields!.filter((f) => f.name !== 'MaxNumOffsets');
      }, 'ListOffsetsRequest'))).to.deep.equal(['ListOffsetsRequest v0 Topics.Partitions:fields']);
      // latestVersionUnstable is compared at our newest version
      expect(where(withReferences((s) => (s.latestVersionUnstable = false), 'InitProducerIdRequest'))).to.deep.equal([
        'InitProducerIdRequest v6 :latestVersionUnstable',
      ]);
    });

    it('catches nullable, type, tagged-version, ignorable, field-flexibleVersions and common-struct changes', () => {
      const mutate = (specName: string, fn: (s: RawSpec) => void): string[] => where(withReferences(fn, specName));
      expect(mutate('MetadataResponse', (s) => (s.fields[1].fields![3].nullableVersions = '2+'))).to.deep.equal(['MetadataResponse v1 Brokers.Rack:nullable']);
      expect(mutate('MetadataResponse', (s) => (s.fields[0].type = 'int64'))).to.include('MetadataResponse v3-13 ThrottleTimeMs:type');
      expect(mutate('ApiVersionsResponse', (s) => (s.fields[4].taggedVersions = '4+'))).to.deep.equal(['ApiVersionsResponse v3 FinalizedFeaturesEpoch:tagged']);
      // ignorable matters where the field is absent: ThrottleTimeMs is v3+
      expect(mutate('MetadataResponse', (s) => (s.fields[0].ignorable = false))).to.deep.equal(['MetadataResponse v0-2 ThrottleTimeMs:ignorable']);
      expect(mutate('RequestHeader', (s) => delete s.fields[3].flexibleVersions)).to.deep.equal(['RequestHeader v1-2 ClientId:flexible']);
      expect(mutate('ConsumerGroupDescribeResponse', (s) => s.commonStructs![0].fields.pop())).to.deep.equal([
        'ConsumerGroupDescribeResponse v0-1 Groups.Members.Assignment.TopicPartitions:fields',
        'ConsumerGroupDescribeResponse v0-1 Groups.Members.TargetAssignment.TopicPartitions:fields',
      ]);
      expect(mutate('ConsumerGroupDescribeResponse', (s) => (s.commonStructs![0].fields[1].versions = '1+'))).to.deep.equal([
        'ConsumerGroupDescribeResponse v0 Groups.Members.Assignment.TopicPartitions:fields',
        'ConsumerGroupDescribeResponse v0 Groups.Members.TargetAssignment.TopicPartitions:fields',
      ]);
      // equivalent spellings are not differences
      expect(mutate('MetadataResponse', (s) => (s.fields[3].default = '-0x1'))).to.deep.equal([]);
      expect(mutate('FetchRequest', (s) => (s.fields.find((f) => f.name === 'MaxBytes')!.default = '2147483647'))).to.deep.equal([]);
    });
  });

  describe("compared with Kafka's coordinator-record specs (in its broker jars)", function () {
    let references: Reference[] = [];

    before(function () {
      const specs = loadCoordinatorRecordSpecs();
      if (!specs) {
        console.log(`    (Kafka's jars not found under ${MAVEN_REPO}: run compat/lib/apache-kafka.sh fetch to compare the coordinator records)`);
        this.skip();
      }
      references = [{ name: `Kafka ${kafkaVersion()} jars`, specs: specs! }];
    });

    it(`${[...COORDINATOR_RECORD_SPECS].join(', ')} match Kafka's wire-wise (or are allow-listed)`, () => {
      expect([...coordinatorRecords.keys()].sort()).to.deep.equal([...COORDINATOR_RECORD_SPECS].sort());
      const { unexpected, unusedAllow } = unexpectedDifferences(coordinatorRecords, references, allowlist(true));
      expect(formatDifferences(unexpected), 'differences not in reference-allowlist.json').to.deep.equal([]);
      expect(unusedAllow.map((a) => `${a.spec} ${a.path}`), 'stale reference-allowlist.json entries').to.deep.equal([]);
    });

    it('catches altered coordinator-record specs (a tagged field without versions has its taggedVersions)', () => {
      const mutate = (specName: string, fn: (s: RawSpec) => void): string[] => {
        const s = JSON.parse(JSON.stringify(ours.get(specName))) as RawSpec;
        fn(s);
        return where(compareWithReferences(s, references)).filter((p) => !p.endsWith(':type') && !p.endsWith(':apiKey'));
      };
      const field = (fields: RawField[], name: string) => fields.find((f) => f.name === name)!;
      expect(mutate('TransactionLogValue', (s) => (field(s.fields, 'NextProducerId').versions = '2+'))).to.deep.equal(['TransactionLogValue v1 :fields']);
      expect(mutate('TransactionLogValue', (s) => delete field(s.fields, 'NextProducerId').versions)).to.deep.equal([]);
      expect(mutate('GroupMetadataValue', (s) => delete field(s.commonStructs![0].fields, 'rebalanceTimeout').default)).to.deep.equal([
        'GroupMetadataValue v0-4 members.rebalanceTimeout:default',
      ]);
    });
  });
});
