// Dynamic broker configs in a cluster of two brokers on etcd: a per-broker value set on broker 1 and
// cluster-wide defaults set through broker 2 (kept in etcd under /configs/brokers/), each broker's
// effective values and DescribeConfigs sources as its cache follows the watch, a broker refusing
// another's id as Kafka does, and broker 1 finding its values again after a restart.
import { expect } from 'chai';
import { ApiKey } from '../../src/protocol/generated';
import type { DescribeConfigsResponse } from '../../src/protocol/generated/DescribeConfigsResponse';
import type { IncrementalAlterConfigsResponse } from '../../src/protocol/generated/IncrementalAlterConfigsResponse';
import { ErrorCode } from '../../src/common/errors';
import { ConfigSource } from '../../src/config/definitions';
import { withEtcdBrokers } from '../helpers/etcd-brokers';
import { eventually } from '../helpers/eventually';

const BROKER = 4;
const SET = 0;
const NO_THROTTLE = Number(9223372036854775807n);

describe('dynamic broker configs in a cluster', function () {
  this.timeout(60_000);
  const cluster = withEtcdBrokers([1, 2]);
  const alter = async (via: number, resourceName: string, configs: { name: string; value: string }[]) =>
    (await cluster.request<IncrementalAlterConfigsResponse>(via, ApiKey.IncrementalAlterConfigs, 1, {
      resources: [{ resourceType: BROKER, resourceName, configs: configs.map((c) => ({ ...c, configOperation: SET })) }], validateOnly: false,
    })).responses[0];
  const describe = async (nodeId: number, keys: string[]) =>
    (await cluster.request<DescribeConfigsResponse>(nodeId, ApiKey.DescribeConfigs, 4, {
      resources: [{ resourceType: BROKER, resourceName: String(nodeId), configurationKeys: keys }], includeSynonyms: true, includeDocumentation: false,
    })).results[0].configs.map((e) => [e.name, e.value, e.configSource]);
  const config = (nodeId: number) => cluster.broker(nodeId).broker.config;

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
    await cluster.restart(1);
    expect(config(1).getLong('leader.replication.throttled.rate')).to.equal(1000000);
    expect(config(1).logRetentionMs).to.equal(3600000);
    expect(await describe(1, ['leader.replication.throttled.rate', 'unclean.leader.election.enable'])).to.deep.equal([
      ['leader.replication.throttled.rate', '1000000', ConfigSource.DYNAMIC_BROKER_CONFIG],
      ['unclean.leader.election.enable', 'true', ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG],
    ]);
  });
});
