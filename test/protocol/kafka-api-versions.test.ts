/*
 * Fjord's ApiVersions side by side with Apache Kafka 4.4.0's (issue 14: the same APIs with the same maximum
 * versions). Kafka's answer is a fixture, kafka-4.4.0-api-versions.json, captured from the oracle (a single
 * KRaft node as new, compat/lib/apache-kafka.sh) with the hand-written ApiVersions v4 client, so that this
 * test needs no Kafka:
 *
 *   compat/lib/apache-kafka.sh start /tmp/k44     # a new directory: Kafka's default features
 *   node compat/lib/api-versions.js 127.0.0.1:PORT --write test/protocol/kafka-4.4.0-api-versions.json
 *   compat/lib/apache-kafka.sh stop /tmp/k44
 *
 * The APIs Kafka serves and Fjord leaves to other issues are listed in LATER, each with its issue (the same
 * list is in compat/README.md).
 */
import * as fs from 'fs';
import * as path from 'path';
import { expect } from 'chai';
import { ApiKey } from '../../src/protocol/generated';
import type { ApiVersionsResponse } from '../../src/protocol/generated/ApiVersionsResponse';
import { ErrorCode } from '../../src/common/errors';
import { RawClient } from '../helpers/raw-client';
import { withBroker } from '../helpers/broker';

interface KafkaApiVersions {
  apiKeys: { apiKey: number; minVersion: number; maxVersion: number }[];
  supportedFeatures: { name: string; minVersion: number; maxVersion: number }[];
  finalizedFeatures: { name: string; maxVersionLevel: number; minVersionLevel: number }[];
}

const ROOT = path.resolve(__dirname, '..', '..', '..'); // dist/test/protocol -> the repository
const KAFKA: KafkaApiVersions = JSON.parse(fs.readFileSync(path.join(ROOT, 'test', 'protocol', 'kafka-4.4.0-api-versions.json'), 'utf8'));

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
/** API keys Kafka 4.4 serves that Fjord leaves to a later issue (or never serves), with the reason. */
const LATER = new Map<number, string>([
  ...range(38, 41).map((k) => [k, 'delegation tokens: not supported (README, Security and quotas)'] as const),
  ...[55, 80, 81, 64, 94].map((k) => [k, 'KRaft quorum APIs: not applicable, the controller keeps its state in etcd'] as const),
]);

const API_NAMES = new Map<number, string>(Object.entries(ApiKey).map(([name, key]) => [key, name]));
const nameOf = (key: number) => `${API_NAMES.get(key) ?? 'API'} (${key})`;

describe('ApiVersions side by side with Kafka 4.4.0', function () {
  this.timeout(20000);
  const broker = withBroker();
  let answer: ApiVersionsResponse;
  let fjord: Map<number, { apiKey: number; minVersion: number; maxVersion: number }>;

  before(async () => {
    const c = await RawClient.connect(broker.current().port);
    const res = await c.request<ApiVersionsResponse>(ApiKey.ApiVersions, 3, { clientSoftwareName: 'test', clientSoftwareVersion: '1' });
    c.close();
    expect(res.errorCode).to.equal(ErrorCode.NONE);
    answer = res;
    fjord = new Map(res.apiKeys.map((k) => [k.apiKey, k]));
  });

  it('the fixture is a Kafka 4.4.0 answer (ApiVersions 0-5, ConsumerGroupHeartbeat 0-1, transaction.version 2)', () => {
    const kafka = new Map(KAFKA.apiKeys.map((k) => [k.apiKey, k]));
    expect(kafka.get(ApiKey.ApiVersions)).to.include({ minVersion: 0, maxVersion: 5 });
    expect(kafka.get(ApiKey.ConsumerGroupHeartbeat)).to.include({ maxVersion: 1 });
    expect(KAFKA.finalizedFeatures.find((f) => f.name === 'transaction.version')).to.include({ maxVersionLevel: 2 });
  });

  it('every API Kafka serves, Fjord serves up to the same maximum version (but those left to other issues)', () => {
    const differences = KAFKA.apiKeys
      .filter((k) => !LATER.has(k.apiKey))
      .filter((k) => fjord.get(k.apiKey)?.maxVersion !== k.maxVersion)
      .map((k) => `${nameOf(k.apiKey)}: Kafka ${k.minVersion}-${k.maxVersion}, Fjord ${fjord.has(k.apiKey) ? `${fjord.get(k.apiKey)!.minVersion}-${fjord.get(k.apiKey)!.maxVersion}` : 'none'}`);
    expect(differences, differences.join('\n')).to.deep.equal([]);
  });

  it('Fjord serves no API that Kafka does not', () => {
    const kafka = new Set(KAFKA.apiKeys.map((k) => k.apiKey));
    const extra = [...fjord.keys()].filter((k) => !kafka.has(k)).map(nameOf);
    expect(extra, extra.join(', ')).to.deep.equal([]);
  });

  it('the APIs left for later are ones Kafka serves (the list stays true)', () => {
    const kafka = new Set(KAFKA.apiKeys.map((k) => k.apiKey));
    expect([...LATER.keys()].filter((k) => !kafka.has(k))).to.deep.equal([]);
  });

  it('compat/lib/api-versions.js (the fixture\'s capture, the harness\'s feature reader) reads what the codec reads', async () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { apiVersions } = require(path.join(ROOT, 'compat', 'lib', 'api-versions.js')) as { apiVersions: (bootstrap: string) => Promise<KafkaApiVersions> };
    const captured = await apiVersions(`127.0.0.1:${broker.current().port}`);
    const triples = (keys: { apiKey: number; minVersion: number; maxVersion: number }[]) => keys.map((k) => [k.apiKey, k.minVersion, k.maxVersion]).sort((a, b) => a[0] - b[0]);
    expect(triples(captured.apiKeys)).to.deep.equal(triples([...fjord.values()]));
    const levels = (fs: { name: string; maxVersionLevel: number }[]) => fs.map((f) => `${f.name}=${f.maxVersionLevel}`).sort();
    expect(levels(captured.finalizedFeatures)).to.deep.equal(levels(answer.finalizedFeatures ?? []));
  });

  it('the finalized features Fjord reports are at the levels Kafka 4.4 finalizes (transaction.version, group.version, streams.version, share.version)', () => {
    for (const name of ['transaction.version', 'group.version', 'streams.version', 'share.version']) {
      const kafka = KAFKA.finalizedFeatures.find((f) => f.name === name);
      const ours = (answer.finalizedFeatures ?? []).find((f) => f.name === name);
      expect(ours?.maxVersionLevel, `${name} finalized`).to.equal(kafka?.maxVersionLevel);
    }
  });
});
