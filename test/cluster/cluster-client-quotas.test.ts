// Client quotas in a cluster of two brokers on etcd: a quota set through broker 1 (kept in etcd under
// /quotas/) is described by broker 2 and enforced there once its cache follows the watch; removed
// through broker 2, broker 1 stops enforcing it.
import { expect } from 'chai';
import { ApiKey } from '../../src/protocol/generated';
import type { AlterClientQuotasResponse } from '../../src/protocol/generated/AlterClientQuotasResponse';
import type { DescribeClientQuotasResponse } from '../../src/protocol/generated/DescribeClientQuotasResponse';
import { withEtcdBrokers } from '../helpers/etcd-brokers';
import { eventually } from '../helpers/eventually';

describe('client quotas in a cluster', function () {
  this.timeout(60_000);
  const cluster = withEtcdBrokers([1, 2]);
  const alter = (via: number, entityName: string | null, key: string, value: number | null) =>
    cluster.request<AlterClientQuotasResponse>(via, ApiKey.AlterClientQuotas, 1, {
      entries: [{ entity: [{ entityType: 'client-id', entityName }], ops: [{ key, value: value ?? 0, remove: value === null }] }], validateOnly: false,
    });
  const quotas = (nodeId: number) => cluster.broker(nodeId).broker.quotas;

  it('applies a quota set through one broker on the other, and its removal', async () => {
    expect(quotas(2).enabled).to.equal(false);
    expect((await alter(1, null, 'producer_byte_rate', 4096)).entries[0].errorCode).to.equal(0);
    await eventually(() => quotas(2).produce.bound('ANONYMOUS', 'any-client') === 4096, 'broker 2 to enforce the quota set through broker 1', 10_000);
    expect(quotas(2).enabled).to.equal(true);
    const described = await cluster.request<DescribeClientQuotasResponse>(2, ApiKey.DescribeClientQuotas, 1, { components: [], strict: false });
    expect(described.entries).to.deep.equal([{ entity: [{ entityType: 'client-id', entityName: null }], values: [{ key: 'producer_byte_rate', value: 4096 }] }]);

    expect((await alter(2, null, 'producer_byte_rate', null)).entries[0].errorCode).to.equal(0);
    await eventually(() => !quotas(1).enabled, 'broker 1 to drop the quota removed through broker 2', 10_000);
    expect(quotas(1).produce.bound('ANONYMOUS', 'any-client')).to.equal(undefined);
  });
});
