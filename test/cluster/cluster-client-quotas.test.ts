// Client quotas in a cluster of two brokers on etcd: a quota set through broker 1 (kept in etcd under
// /quotas/) is described by broker 2 and enforced there once its cache follows the watch; removed
// through broker 2, broker 1 stops enforcing it.
import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { startBroker, type RunningBroker } from '../../src/broker';
import { ApiKey } from '../../src/protocol/generated';
import type { AlterClientQuotasResponse } from '../../src/protocol/generated/AlterClientQuotasResponse';
import type { DescribeClientQuotasResponse } from '../../src/protocol/generated/DescribeClientQuotasResponse';
import { startEtcd, type RunningEtcd } from '../helpers/etcd';
import { eventually } from '../helpers/eventually';
import { RawClient } from '../helpers/raw-client';

describe('client quotas in a cluster', function () {
  this.timeout(60_000);
  let etcd: RunningEtcd;
  let root: string;
  const brokers = new Map<number, RunningBroker>();

  const request = async <T>(nodeId: number, apiKey: number, version: number, body: unknown): Promise<T> => {
    const c = await RawClient.connect(brokers.get(nodeId)!.port);
    try {
      return await c.request<T>(apiKey, version, body);
    } finally {
      c.close();
    }
  };
  const alter = (via: number, entityName: string | null, key: string, value: number | null) =>
    request<AlterClientQuotasResponse>(via, ApiKey.AlterClientQuotas, 1, {
      entries: [{ entity: [{ entityType: 'client-id', entityName }], ops: [{ key, value: value ?? 0, remove: value === null }] }], validateOnly: false,
    });
  const quotas = (nodeId: number) => brokers.get(nodeId)!.broker.quotas;

  before(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'fjord-cluster-quotas-'));
    etcd = await startEtcd();
    for (const nodeId of [1, 2]) {
      brokers.set(nodeId, await startBroker({
        nodeId, dataDir: path.join(root, `broker-${nodeId}`), logLevel: process.env.FJORD_TEST_LOG ?? 'silent',
        config: { 'etcd.connect': etcd.connect, 'broker.session.timeout.ms': '6000', 'offsets.topic.replication.factor': '2' },
      }));
    }
  });
  after(async () => {
    await Promise.all([...brokers.values()].map((b) => b.close()));
    await etcd?.stop();
    await rm(root, { recursive: true, force: true });
  });

  it('applies a quota set through one broker on the other, and its removal', async () => {
    expect(quotas(2).enabled).to.equal(false);
    expect((await alter(1, null, 'producer_byte_rate', 4096)).entries[0].errorCode).to.equal(0);
    await eventually(() => quotas(2).produce.bound('ANONYMOUS', 'any-client') === 4096, 'broker 2 to enforce the quota set through broker 1', 10_000);
    expect(quotas(2).enabled).to.equal(true);
    const described = await request<DescribeClientQuotasResponse>(2, ApiKey.DescribeClientQuotas, 1, { components: [], strict: false });
    expect(described.entries).to.deep.equal([{ entity: [{ entityType: 'client-id', entityName: null }], values: [{ key: 'producer_byte_rate', value: 4096 }] }]);

    expect((await alter(2, null, 'producer_byte_rate', null)).entries[0].errorCode).to.equal(0);
    await eventually(() => !quotas(1).enabled, 'broker 1 to drop the quota removed through broker 2', 10_000);
    expect(quotas(1).produce.bound('ANONYMOUS', 'any-client')).to.equal(undefined);
  });
});
