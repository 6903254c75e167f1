#!/usr/bin/env node
'use strict';
/*
 * Captures what a real Apache Kafka answers to DescribeConfigs (v4, with synonyms and documentation)
 * for a BROKER, a TOPIC without overrides and a GROUP without configs, into the fixture that
 * test/config/kafka-configs.test.ts compares Fjord's answers with. Run by hand, not by the tests:
 *
 *   npx tsc -p tsconfig.json
 *   compat/lib/apache-kafka.sh start /tmp/k44      # prints 127.0.0.1:PORT
 *   node scripts/capture-kafka-configs.js 127.0.0.1:PORT
 *   compat/lib/apache-kafka.sh stop /tmp/k44
 *
 * Output: test/config/kafka-configs.json. Per config it keeps what does not depend on the oracle's own
 * settings: its default (the DEFAULT_CONFIG synonym, or the value when that is the source), type,
 * read-only flag, sensitivity, source and whether it has documentation (the documentation text itself
 * is Kafka's and is not kept). The configs the oracle sets in its server.properties are listed, so the
 * test does not compare their sources.
 */
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
const OUT = path.join(ROOT, 'test', 'config', 'kafka-configs.json');
const { RawClient } = require(path.join(ROOT, 'dist/test/helpers/raw-client.js'));

const DESCRIBE_CONFIGS = 32;
const CREATE_TOPICS = 19;
const METADATA = 3;
const TOPIC_ALREADY_EXISTS = 36;
const RESOURCE = { topic: 2, broker: 4, group: 32 };
const DEFAULT_CONFIG = 5;
const STATIC_BROKER_CONFIG = 4;

const TOPIC = 'fjord-config-fixture';
// A group that has never had configs: every entry is a default.
const GROUP = `fjord-config-fixture-${Date.now()}`;

function summarize(result) {
  const configs = {};
  for (const c of [...result.configs].sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const defaultSynonym = c.synonyms.find((s) => s.source === DEFAULT_CONFIG);
    configs[c.name] = {
      default: defaultSynonym ? defaultSynonym.value : c.configSource === DEFAULT_CONFIG ? c.value : null,
      type: c.configType,
      readOnly: c.readOnly,
      sensitive: c.isSensitive,
      source: c.configSource,
      documented: c.documentation !== null && c.documentation !== '',
    };
  }
  return { errorCode: result.errorCode, errorMessage: result.errorMessage, configs };
}

/** JSON with one config per line, so that a re-capture's diff shows which configs changed. */
function format(fixture) {
  const resource = (r) => [
    '{', `  "errorCode": ${r.errorCode}, "errorMessage": ${JSON.stringify(r.errorMessage)},`, '  "configs": {',
    Object.entries(r.configs).map(([name, c]) => `   ${JSON.stringify(name)}: ${JSON.stringify(c)}`).join(',\n'),
    '  }', ' }',
  ].join('\n');
  return ['{',
    ` "describeConfigsVersion": ${fixture.describeConfigsVersion},`,
    ` "staticBrokerConfigs": ${JSON.stringify(fixture.staticBrokerConfigs)},`,
    ` "broker": ${resource(fixture.broker)},`,
    ` "topic": ${resource(fixture.topic)},`,
    ` "group": ${resource(fixture.group)}`,
    '}', ''].join('\n');
}

async function main() {
  const [host, port] = (process.argv[2] ?? '').split(':');
  if (!host || !port) {
    console.error('usage: node scripts/capture-kafka-configs.js HOST:PORT');
    process.exit(2);
  }
  const client = await RawClient.connect(Number(port), host);
  try {
    const metadata = await client.request(METADATA, 12, { topics: [], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
    const nodeId = metadata.brokers[0].nodeId;
    const created = await client.request(CREATE_TOPICS, 5, {
      topics: [{ name: TOPIC, numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 30000, validateOnly: false,
    });
    const topicError = created.topics[0].errorCode;
    if (topicError !== 0 && topicError !== TOPIC_ALREADY_EXISTS) throw new Error(`CreateTopics failed: ${topicError}`);
    const described = await client.request(DESCRIBE_CONFIGS, 4, {
      resources: [
        { resourceType: RESOURCE.broker, resourceName: String(nodeId), configurationKeys: null },
        { resourceType: RESOURCE.topic, resourceName: TOPIC, configurationKeys: null },
        { resourceType: RESOURCE.group, resourceName: GROUP, configurationKeys: null },
      ],
      includeSynonyms: true, includeDocumentation: true,
    });
    const [broker, topic, group] = described.results.map(summarize);
    const staticBrokerConfigs = Object.keys(broker.configs).filter((n) => broker.configs[n].source === STATIC_BROKER_CONFIG);
    const fixture = { describeConfigsVersion: 4, staticBrokerConfigs, broker, topic, group };
    fs.writeFileSync(OUT, format(fixture));
    console.log(`wrote ${path.relative(ROOT, OUT)}: ${Object.keys(broker.configs).length} broker, ` +
      `${Object.keys(topic.configs).length} topic, ${Object.keys(group.configs).length} group configs`);
  } finally {
    client.close();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
