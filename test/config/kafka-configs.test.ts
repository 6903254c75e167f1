// DescribeConfigs as Kafka 4.4 answers it: Fjord's BROKER, TOPIC and GROUP configs against what a real
// Apache Kafka 4.4.0 answered (test/config/kafka-configs.json, captured by
// scripts/capture-kafka-configs.js). Each config is compared on its presence, default, type, read-only
// flag, sensitivity, source and whether it is documented; every difference must be listed with its
// reason in test/config/kafka-configs-allowlist.json, and every entry there must still be needed.
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ApiKey } from '../../src/protocol/generated';
import type { DescribeConfigsResponse, DescribeConfigsResponseDescribeConfigsResult as Result } from '../../src/protocol/generated/DescribeConfigsResponse';
import { ConfigSource } from '../../src/config/definitions';
import { withBroker } from '../helpers/broker';
import { RawClient } from '../helpers/raw-client';

const HERE = path.resolve(__dirname, '..', '..', '..', 'test', 'config');
const RESOURCE_TYPES = { broker: 4, topic: 2, group: 32 } as const;
type ResourceKind = keyof typeof RESOURCE_TYPES;

interface ConfigFacts {
  default: string | null;
  type: number;
  readOnly: boolean;
  sensitive: boolean;
  source: number;
  documented: boolean;
}
type Field = keyof ConfigFacts | 'absent' | 'fjordOnly';

interface Fixture {
  staticBrokerConfigs: string[];
  broker: { errorMessage: string | null; configs: Record<string, ConfigFacts> };
  topic: { errorMessage: string | null; configs: Record<string, ConfigFacts> };
  group: { errorMessage: string | null; configs: Record<string, ConfigFacts> };
}

interface AllowEntry {
  resource: ResourceKind;
  /** A config name, or a prefix ending in '*'. */
  config: string;
  field: Field;
  reason: string;
}

interface Difference {
  resource: ResourceKind;
  config: string;
  field: Field;
  kafka?: unknown;
  fjord?: unknown;
}

const fixture = JSON.parse(fs.readFileSync(path.join(HERE, 'kafka-configs.json'), 'utf8')) as Fixture;
const allowlist = JSON.parse(fs.readFileSync(path.join(HERE, 'kafka-configs-allowlist.json'), 'utf8')) as AllowEntry[];

function factsOf(result: Result): Record<string, ConfigFacts> {
  const out: Record<string, ConfigFacts> = {};
  for (const c of result.configs) {
    const defaultSynonym = (c.synonyms ?? []).find((s) => s.source === ConfigSource.DEFAULT_CONFIG);
    out[c.name] = {
      default: defaultSynonym ? defaultSynonym.value : c.configSource === ConfigSource.DEFAULT_CONFIG ? c.value : null,
      type: c.configType ?? 0,
      readOnly: c.readOnly,
      sensitive: c.isSensitive,
      source: c.configSource ?? 0,
      documented: c.documentation !== null && c.documentation !== '',
    };
  }
  return out;
}

function compare(resource: ResourceKind, kafka: Record<string, ConfigFacts>, fjord: Record<string, ConfigFacts>, staticNames: Set<string>): Difference[] {
  const out: Difference[] = [];
  for (const [name, k] of Object.entries(kafka)) {
    const f = fjord[name];
    if (!f) {
      out.push({ resource, config: name, field: 'absent' });
      continue;
    }
    for (const field of ['default', 'type', 'readOnly', 'sensitive', 'documented'] as const) {
      if (k[field] !== f[field]) out.push({ resource, config: name, field, kafka: k[field], fjord: f[field] });
    }
    // Where either broker set the config itself, its source says so and tells nothing.
    if (!staticNames.has(name) && k.source !== f.source) out.push({ resource, config: name, field: 'source', kafka: k.source, fjord: f.source });
  }
  for (const name of Object.keys(fjord)) {
    if (!kafka[name]) out.push({ resource, config: name, field: 'fjordOnly' });
  }
  return out;
}

const matches = (a: AllowEntry, d: Difference): boolean => a.resource === d.resource && a.field === d.field &&
  (a.config.endsWith('*') ? d.config.startsWith(a.config.slice(0, -1)) : a.config === d.config);

describe('DescribeConfigs against Kafka 4.4.0', function () {
  this.timeout(60_000);
  const broker = withBroker();
  let results: Record<ResourceKind, Result>;

  before(async () => {
    const c = await RawClient.connect(broker.current().port);
    try {
      await c.request(ApiKey.CreateTopics, 5, {
        topics: [{ name: 'fjord-config-fixture', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 30000, validateOnly: false,
      });
      const res = await c.request<DescribeConfigsResponse>(ApiKey.DescribeConfigs, 4, {
        resources: [
          { resourceType: RESOURCE_TYPES.broker, resourceName: String(broker.current().broker.config.nodeId), configurationKeys: null },
          { resourceType: RESOURCE_TYPES.topic, resourceName: 'fjord-config-fixture', configurationKeys: null },
          { resourceType: RESOURCE_TYPES.group, resourceName: 'fjord-config-fixture-group', configurationKeys: null },
        ],
        includeSynonyms: true, includeDocumentation: true,
      });
      const [b, t, g] = res.results;
      results = { broker: b, topic: t, group: g };
    } finally {
      c.close();
    }
  });

  for (const resource of Object.keys(RESOURCE_TYPES) as ResourceKind[]) {
    it(`answers a ${resource} resource with Kafka's error code and message`, () => {
      expect(results[resource].errorCode).to.equal(0);
      expect(results[resource].errorMessage).to.equal(fixture[resource].errorMessage);
    });
  }

  it('reports every config as Kafka does, or lists why not', () => {
    const differences: Difference[] = [];
    for (const resource of Object.keys(RESOURCE_TYPES) as ResourceKind[]) {
      const fjord = factsOf(results[resource]);
      const fjordStatic = Object.keys(fjord).filter((n) => fjord[n].source === ConfigSource.STATIC_BROKER_CONFIG);
      const staticNames = new Set(resource === 'broker' ? [...fixture.staticBrokerConfigs, ...fjordStatic] : []);
      differences.push(...compare(resource, fixture[resource].configs, fjord, staticNames));
    }
    const used = new Set<AllowEntry>();
    const unexpected = differences.filter((d) => {
      const entry = allowlist.find((a) => matches(a, d));
      if (entry) used.add(entry);
      return !entry;
    });
    const show = (d: Difference) => `${d.resource} ${d.config} ${d.field}` + ('kafka' in d ? `: Kafka ${JSON.stringify(d.kafka)}, Fjord ${JSON.stringify(d.fjord)}` : '');
    expect(unexpected.map(show), 'differences not in kafka-configs-allowlist.json').to.deep.equal([]);
    expect(allowlist.filter((a) => !used.has(a)).map((a) => `${a.resource} ${a.config} ${a.field}`), 'stale kafka-configs-allowlist.json entries').to.deep.equal([]);
  });
});
