// Two brokers on one etcd: the finalized features are the cluster's (etcd's /features), so an
// UpdateFeatures answered by one broker is seen by the other, updates made at once on both brokers
// both land (each is checked again after losing the race), and a restarted broker keeps them.
import { expect } from 'chai';
import { ApiKey } from '../../src/protocol/generated';
import type { ApiVersionsResponse } from '../../src/protocol/generated/ApiVersionsResponse';
import type { UpdateFeaturesResponse } from '../../src/protocol/generated/UpdateFeaturesResponse';
import { ErrorCode } from '../../src/common/errors';
import { startBroker, type RunningBroker } from '../../src/broker';
import type { FinalizedFeatures } from '../../src/cluster/features';
import { EtcdCluster } from '../../src/cluster/etcd/etcd-cluster';
import { startEtcd, type RunningEtcd } from '../helpers/etcd';
import { eventually } from '../helpers/eventually';
import { RawClient } from '../helpers/raw-client';

const levelsOf = (res: ApiVersionsResponse) => Object.fromEntries((res.finalizedFeatures ?? []).map((f) => [f.name, f.maxVersionLevel]));

describe('features in a cluster of two brokers on etcd', function () {
  this.timeout(60_000);
  let etcd: RunningEtcd | undefined;
  const brokers: (RunningBroker | undefined)[] = [];

  const startNode = (nodeId: number) => startBroker({
    nodeId, logLevel: process.env.FJORD_TEST_LOG ?? 'silent',
    // Two brokers and the default offsets.topic.replication.factor of 3: the group coordinator waits for a
    // third broker that never comes, and close() must not wait with it.
    config: { 'etcd.connect': etcd!.connect, 'broker.session.timeout.ms': '6000', 'offsets.topic.num.partitions': '1' },
  });
  const apiVersions = (i: number) => RawClient.requestOnce<ApiVersionsResponse>(brokers[i]!.port, ApiKey.ApiVersions, 4,
    { clientSoftwareName: 'features-test', clientSoftwareVersion: '1.0' });
  const update = (i: number, feature: string, level: number, upgradeType: number) => RawClient.requestOnce<UpdateFeaturesResponse>(
    brokers[i]!.port, ApiKey.UpdateFeatures, 2, { featureUpdates: [{ feature, maxVersionLevel: level, upgradeType }] });

  before(async () => {
    etcd = await startEtcd();
    brokers[0] = await startNode(0);
    brokers[1] = await startNode(1);
  });
  after(async () => {
    await Promise.all(brokers.map((b) => b?.close()));
    await etcd?.stop();
  });

  it('starts a new cluster at Kafka 4.4\'s defaults, the same on both brokers', async () => {
    for (const i of [0, 1]) {
      expect(levelsOf(await apiVersions(i))).to.deep.equal({ 'metadata.version': 33, 'transaction.version': 2, 'group.version': 1, 'streams.version': 1, 'share.version': 2 });
    }
  });

  it('an update through one broker reaches the other, with its change event and a higher epoch', async () => {
    const other = brokers[1]!.broker.features;
    const before = other.finalized().epoch;
    const seen: FinalizedFeatures[] = [];
    other.on('change', (f: FinalizedFeatures) => seen.push(f));
    const res = await update(0, 'transaction.version', 1, 2);
    expect(res).to.deep.include({ errorCode: ErrorCode.NONE, errorMessage: null });
    await eventually(() => other.transactionVersion() === 1, 'broker 1 sees transaction.version 1', 10_000);
    expect(seen.at(-1)!.levels['transaction.version']).to.equal(1);
    expect(other.finalized().epoch).to.be.greaterThan(before);
    expect(levelsOf(await apiVersions(1))['transaction.version']).to.equal(1);
  });

  it('updates made at once through both brokers both land', async () => {
    const [a, b] = await Promise.all([update(0, 'group.version', 0, 2), update(1, 'transaction.version', 2, 1)]);
    expect([a.errorCode, b.errorCode]).to.deep.equal([ErrorCode.NONE, ErrorCode.NONE]);
    for (const i of [0, 1]) {
      await eventually(() => brokers[i]!.broker.features.groupVersion() === 0 && brokers[i]!.broker.features.transactionVersion() === 2,
        `broker ${i} sees both updates`, 10_000);
    }
  });

  it('refuses a level a registered broker does not support, and allows it once that broker is gone', async () => {
    expect((await update(0, 'transaction.version', 1, 2)).errorCode).to.equal(ErrorCode.NONE);
    // A broker of a version that supports transaction.version up to 1 only (just its registration).
    const older = await EtcdCluster.start({
      connect: { endpoints: [etcd!.connect], prefix: '' }, nodeId: 7, sessionTimeoutMs: 6000,
      endpoints: [{ name: 'PLAINTEXT', securityProtocol: 'PLAINTEXT', host: '127.0.0.1', port: 1 }],
      supportedFeatures: [{ name: 'metadata.version', minVersion: 7, maxVersion: 33 }, { name: 'transaction.version', minVersion: 0, maxVersion: 1 }],
    });
    try {
      await eventually(() => brokers[0]!.broker.controller.brokers().some((b) => b.nodeId === 7), 'broker 0 sees broker 7', 10_000);
      const refused = await update(0, 'transaction.version', 2, 1);
      expect(refused.errorCode).to.equal(ErrorCode.INVALID_UPDATE_VERSION);
      expect(refused.errorMessage).to.equal('The update failed for all features since the following feature had an error: ' +
        'Invalid update version 2 for feature transaction.version. Broker 7 only supports versions 0-1');
    } finally {
      await older.close();
    }
    await eventually(() => !brokers[0]!.broker.controller.brokers().some((b) => b.nodeId === 7), 'broker 7 gone', 10_000);
    expect((await update(0, 'transaction.version', 2, 1)).errorCode).to.equal(ErrorCode.NONE);
  });

  it('a restarted broker keeps the cluster\'s levels (no defaults written over them)', async () => {
    await brokers[1]!.close();
    brokers[1] = await startNode(1);
    expect(levelsOf(await apiVersions(1))).to.deep.equal({ 'metadata.version': 33, 'transaction.version': 2, 'streams.version': 1, 'share.version': 2 });
  });
});
