// Dynamic broker configs in a cluster of two brokers on etcd: a per-broker value set on broker 1 and
// cluster-wide defaults set through broker 2 (kept in etcd under /configs/brokers/), each broker's
// effective values and DescribeConfigs sources as its cache follows the watch, a broker refusing
// another's id as Kafka does, and broker 1 finding its values again after a restart.
import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { startBroker, type RunningBroker } from '../../src/broker';
import { ApiKey } from '../../src/protocol/generated';
import type { DescribeConfigsResponse } from '../../src/protocol/generated/DescribeConfigsResponse';
import type { IncrementalAlterConfigsResponse } from '../../src/protocol/generated/IncrementalAlterConfigsResponse';
import { ErrorCode } from '../../src/common/errors';
import { ConfigSource } from '../../src/config/definitions';
import { startEtcd, type RunningEtcd } from '../helpers/etcd';
import { eventually } from '../helpers/eventually';
import { RawClient } from '../helpers/raw-client';

const BROKER = 4;
const SET = 0;
const NO_THROTTLE = Number(9223372036854775807n);

describe('dynamic broker configs in a cluster', function () {
  this.timeout(60_000);
  let etcd: RunningEtcd;
  let root: string;
  const brokers = new Map<number, RunningBroker>();

  const startNode = async (nodeId: number) => {
    brokers.set(nodeId, await startBroker({
      nodeId, dataDir: path.join(root, `broker-${nodeId}`), logLevel: process.env.FJORD_TEST_LOG ?? 'silent',
      config: { 'etcd.connect': etcd.connect, 'broker.session.timeout.ms': '6000', 'offsets.topic.replication.factor': '2' },
    }));
  };
  const request = async <T>(nodeId: number, apiKey: number, version: number, body: unknown): Promise<T> => {
    const c = await RawClient.connect(brokers.get(nodeId)!.port);
    try {
      return await c.request<T>(apiKey, version, body);
    } finally {
      c.close();
    }
  };
  const alter = async (via: number, resourceName: string, configs: { name: string; value: string }[]) =>
    (await request<IncrementalAlterConfigsResponse>(via, ApiKey.IncrementalAlterConfigs, 1, {
      resources: [{ resourceType: BROKER, resourceName, configs: configs.map((c) => ({ ...c, configOperation: SET })) }], validateOnly: false,
    })).responses[0];
  const describe = async (nodeId: number, keys: string[]) =>
    (await request<DescribeConfigsResponse>(nodeId, ApiKey.DescribeConfigs, 4, {
      resources: [{ resourceType: BROKER, resourceName: String(nodeId), configurationKeys: keys }], includeSynonyms: true, includeDocumentation: false,
    })).results[0].configs.map((e) => [e.name, e.value, e.configSource]);
  const config = (nodeId: number) => brokers.get(nodeId)!.broker.config;

  before(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'fjord-cluster-dynamic-configs-'));
    etcd = await startEtcd();
    await startNode(1);
    await startNode(2);
  });
  after(async () => {
    await Promise.all([...brokers.values()].map((b) => b.close()));
    await etcd?.stop();
    await rm(root, { recursive: true, force: true });
  });

  it('applies a per-broker value to its broker only and the defaults to every broker, whichever broker took them', async () => {
    expect(await alter(1, '1', [{ name: 'leader.replication.throttled.rate', value: '1000000' }])).to.include({ errorCode: ErrorCode.NONE });
    expect(await alter(2, '', [{ name: 'log.retention.ms', value: '3600000' }, { name: 'unclean.leader.election.enable', value: 'true' }]))
      .to.include({ errorCode: ErrorCode.NONE });

    await eventually(() => config(1).logRetentionMs === 3600000 && config(1).getBool('unclean.leader.election.enable'),
      'broker 1 to see the defaults written through broker 2', 10_000);
    expect(config(2).logRetentionMs).to.equal(3600000);
    expect(config(1).getLong('leader.replication.throttled.rate')).to.equal(1000000);
    expect(config(2).getLong('leader.replication.throttled.rate')).to.equal(NO_THROTTLE);

    const keys = ['leader.replication.throttled.rate', 'log.retention.ms', 'unclean.leader.election.enable'];
    expect(await describe(1, keys)).to.deep.equal([
      ['leader.replication.throttled.rate', '1000000', ConfigSource.DYNAMIC_BROKER_CONFIG],
      ['log.retention.ms', '3600000', ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG],
      ['unclean.leader.election.enable', 'true', ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG],
    ]);
    expect(await describe(2, keys)).to.deep.equal([
      ['log.retention.ms', '3600000', ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG],
      ['unclean.leader.election.enable', 'true', ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG],
    ]);
  });

  it('lets a broker set its own value over the default, and refuses another broker\'s id', async () => {
    expect(await alter(2, '2', [{ name: 'unclean.leader.election.enable', value: 'false' }])).to.include({ errorCode: ErrorCode.NONE });
    expect(config(2).getBool('unclean.leader.election.enable')).to.equal(false);
    expect(config(1).getBool('unclean.leader.election.enable')).to.equal(true);
    expect(await alter(2, '1', [{ name: 'message.max.bytes', value: '2000' }]))
      .to.include({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Unexpected broker id, expected 2, but received 1' });
  });

  it('finds its dynamic configs again after a restart', async () => {
    await brokers.get(1)!.close();
    brokers.delete(1);
    await startNode(1);
    expect(config(1).getLong('leader.replication.throttled.rate')).to.equal(1000000);
    expect(config(1).logRetentionMs).to.equal(3600000);
    expect(await describe(1, ['leader.replication.throttled.rate', 'unclean.leader.election.enable'])).to.deep.equal([
      ['leader.replication.throttled.rate', '1000000', ConfigSource.DYNAMIC_BROKER_CONFIG],
      ['unclean.leader.election.enable', 'true', ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG],
    ]);
  });
});
