// Features on the wire, as the Kafka 4.4 oracle answers them: ApiVersions' supported and
// finalized features, UpdateFeatures at each version, and the levels kept across a restart.
import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { ApiKey } from '../../src/protocol/generated';
import type { ApiVersionsResponse } from '../../src/protocol/generated/ApiVersionsResponse';
import type { UpdateFeaturesResponse } from '../../src/protocol/generated/UpdateFeaturesResponse';
import { ErrorCode } from '../../src/common/errors';
import { startBroker, type RunningBroker } from '../../src/broker';
import { RawClient } from '../helpers/raw-client';
import { updateFeatures as updateFeaturesHandler } from '../../src/handlers/update-features';
import type { RequestContext } from '../../src/handlers/handler';
import { allowAllRequest } from '../helpers/request-context';

const SOFTWARE = { clientSoftwareName: 'features-test', clientSoftwareVersion: '1.0' };

async function apiVersions(port: number, version: number, target: { clusterId?: string; nodeId?: number } = {}): Promise<ApiVersionsResponse> {
  const c = await RawClient.connect(port);
  try {
    return await c.request<ApiVersionsResponse>(ApiKey.ApiVersions, version, { ...SOFTWARE, ...target });
  } finally {
    c.close();
  }
}

async function updateFeatures(port: number, version: number, body: unknown): Promise<UpdateFeaturesResponse> {
  const c = await RawClient.connect(port);
  try {
    return await c.request<UpdateFeaturesResponse>(ApiKey.UpdateFeatures, version, body);
  } finally {
    c.close();
  }
}

/** The finalized levels of an ApiVersions answer, by name. */
const finalizedOf = (res: ApiVersionsResponse) =>
  Object.fromEntries((res.finalizedFeatures ?? []).map((f) => [f.name, [f.minVersionLevel, f.maxVersionLevel]]));

describe('features on the wire', function () {
  this.timeout(30000);
  let dataDir: string;
  let broker: RunningBroker | undefined;
  before(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'fjord-features-'));
    broker = await startBroker({ dataDir, logLevel: 'silent' });
  });
  after(async () => {
    await broker?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('ApiVersions v4 lists the supported features and the finalized levels of a new Kafka 4.4 cluster', async () => {
    const res = await apiVersions(broker!.port, 4);
    expect(res.supportedFeatures!.map((f) => [f.name, f.minVersion, f.maxVersion])).to.deep.equal([
      ['group.version', 0, 1], ['kraft.version', 0, 1], ['metadata.version', 7, 33], ['share.version', 0, 2],
      ['streams.version', 0, 1], ['transaction.version', 0, 2], ['eligible.leader.replicas.version', 0, 0],
    ]);
    expect(finalizedOf(res)).to.deep.equal({ 'metadata.version': [33, 33], 'transaction.version': [2, 2], 'group.version': [1, 1], 'streams.version': [1, 1], 'share.version': [2, 2] });
    expect(res.finalizedFeaturesEpoch! >= 0n).to.equal(true);
    expect(res.zkMigrationReady).to.equal(false);
  });

  it('ApiVersions v3 leaves out the supported features whose minimum is 0 (KAFKA-17011), v2 has no features', async () => {
    const v3 = await apiVersions(broker!.port, 3);
    expect(v3.supportedFeatures!.map((f) => f.name)).to.deep.equal(['metadata.version']);
    expect(finalizedOf(v3)).to.have.keys('metadata.version', 'transaction.version', 'group.version', 'streams.version', 'share.version');
    const v2 = await apiVersions(broker!.port, 2);
    expect(v2.apiKeys.find((k) => k.apiKey === ApiKey.UpdateFeatures)).to.deep.include({ minVersion: 0, maxVersion: 2 });
    expect(v2.supportedFeatures ?? []).to.deep.equal([]);
  });

  it('ApiVersions v5 answers a client that names this cluster and node, and sends one that names another to rebootstrap', async () => {
    const { clusterId, nodeId } = broker!.broker;
    const named = await apiVersions(broker!.port, 5, { clusterId, nodeId });
    expect(named.errorCode).to.equal(ErrorCode.NONE);
    expect(named.apiKeys.find((k) => k.apiKey === ApiKey.ApiVersions)).to.deep.include({ minVersion: 0, maxVersion: 5 });
    expect(finalizedOf(named)).to.have.property('metadata.version');
    expect((await apiVersions(broker!.port, 5)).errorCode).to.equal(ErrorCode.NONE);
    for (const wrong of [{ clusterId, nodeId: nodeId + 1 }, { clusterId: 'another-cluster', nodeId }, { clusterId, nodeId: -2 }]) {
      const res = await apiVersions(broker!.port, 5, wrong);
      expect([res.errorCode, res.apiKeys.length, res.supportedFeatures ?? []], JSON.stringify(wrong)).to.deep.equal([ErrorCode.REBOOTSTRAP_REQUIRED, 0, []]);
    }
    for (const half of [{ clusterId }, { nodeId }]) {
      const res = await apiVersions(broker!.port, 5, half);
      expect([res.errorCode, res.apiKeys.length], JSON.stringify(half)).to.deep.equal([ErrorCode.INVALID_REQUEST, 0]);
    }
  });

  it('UpdateFeatures v1 validateOnly answers NONE per feature and changes nothing; v2 answers with no results', async () => {
    const before = await apiVersions(broker!.port, 4);
    const v1 = await updateFeatures(broker!.port, 1, {
      featureUpdates: [{ feature: 'group.version', maxVersionLevel: 0, upgradeType: 2 }], validateOnly: true,
    });
    expect(v1).to.deep.include({ errorCode: ErrorCode.NONE, errorMessage: null });
    expect(v1.results).to.deep.equal([{ feature: 'group.version', errorCode: ErrorCode.NONE, errorMessage: 'NONE' }]);
    const v2 = await updateFeatures(broker!.port, 2, {
      featureUpdates: [{ feature: 'group.version', maxVersionLevel: 0, upgradeType: 2 }], validateOnly: true,
    });
    expect(v2).to.deep.include({ errorCode: ErrorCode.NONE, errorMessage: null });
    expect(v2.results ?? []).to.deep.equal([]);
    expect(finalizedOf(await apiVersions(broker!.port, 4))).to.deep.equal(finalizedOf(before));
  });

  it('refuses the whole request at the first refused feature, with no results at any version', async () => {
    for (const version of [0, 1, 2]) {
      const res = await updateFeatures(broker!.port, version, {
        featureUpdates: [{ feature: 'transaction.version', maxVersionLevel: 0, allowDowngrade: false, upgradeType: 1 }],
      });
      expect(res.errorCode, `v${version}`).to.equal(ErrorCode.INVALID_UPDATE_VERSION);
      expect(res.errorMessage).to.equal('The update failed for all features since the following feature had an error: ' +
        'Invalid update version 0 for feature transaction.version. Can\'t downgrade the version of this feature without ' +
        'setting the upgrade type to either safe or unsafe downgrade.');
      expect(res.results ?? []).to.deep.equal([]);
    }
  });

  it('v0 cannot downgrade: AllowDowngrade is ignored, as Kafka 4.4 ignores it', async () => {
    const res = await updateFeatures(broker!.port, 0, {
      featureUpdates: [{ feature: 'transaction.version', maxVersionLevel: 1, allowDowngrade: true }],
    });
    expect(res.errorCode).to.equal(ErrorCode.INVALID_UPDATE_VERSION);
    expect(res.errorMessage).to.match(/Invalid update version 1 for feature transaction.version. Can't downgrade the version of this feature without/);
    const same = await updateFeatures(broker!.port, 0, { featureUpdates: [{ feature: 'transaction.version', maxVersionLevel: 2, allowDowngrade: true }] });
    expect(same.results).to.deep.equal([{ feature: 'transaction.version', errorCode: ErrorCode.NONE, errorMessage: 'NONE' }]);
  });

  it('v1 SAFE_DOWNGRADE downgrades transaction.version; the epoch rises; the level is kept across a restart', async () => {
    const before = await apiVersions(broker!.port, 4);
    const res = await updateFeatures(broker!.port, 1, {
      featureUpdates: [{ feature: 'transaction.version', maxVersionLevel: 1, upgradeType: 2 }],
    });
    expect(res).to.deep.include({ errorCode: ErrorCode.NONE });
    expect(res.results).to.deep.equal([{ feature: 'transaction.version', errorCode: ErrorCode.NONE, errorMessage: 'NONE' }]);
    expect(broker!.broker.features.transactionVersion()).to.equal(1);
    const after = await apiVersions(broker!.port, 4);
    expect(finalizedOf(after)['transaction.version']).to.deep.equal([1, 1]);
    expect(after.finalizedFeaturesEpoch! > before.finalizedFeaturesEpoch!).to.equal(true);

    await broker!.close();
    broker = await startBroker({ dataDir, logLevel: 'silent' });
    expect(finalizedOf(await apiVersions(broker.port, 4))).to.deep.equal({
      'metadata.version': [33, 33], 'transaction.version': [1, 1], 'group.version': [1, 1], 'streams.version': [1, 1], 'share.version': [2, 2],
    });

    const up = await updateFeatures(broker.port, 2, { featureUpdates: [{ feature: 'transaction.version', maxVersionLevel: 2, upgradeType: 1 }] });
    expect(up.errorCode).to.equal(ErrorCode.NONE);
    expect(broker.broker.features.transactionVersion()).to.equal(2);
  });

  it('removes a feature downgraded to 0 from the finalized list', async () => {
    const res = await updateFeatures(broker!.port, 2, { featureUpdates: [{ feature: 'group.version', maxVersionLevel: 0, upgradeType: 3 }] });
    expect(res.errorCode).to.equal(ErrorCode.NONE);
    expect(finalizedOf(await apiVersions(broker!.port, 4))).to.not.have.property('group.version');
    expect(broker!.broker.features.groupVersion()).to.equal(0);
  });
});

describe('UpdateFeatures when the levels cannot be written', () => {
  it('answers FEATURE_UPDATE_FAILED (etcd out of reach), never a closed connection', async () => {
    const handler = updateFeaturesHandler.bind({ features: { update: () => Promise.reject(new Error('etcd: deadline exceeded')) } });
    const res = await handler.handle({ featureUpdates: [{ feature: 'transaction.version', maxVersionLevel: 1, allowDowngrade: false, upgradeType: 2 }] },
      { apiVersion: 1, ...allowAllRequest } as RequestContext);
    expect(res).to.deep.equal({
      throttleTimeMs: 0, errorCode: ErrorCode.FEATURE_UPDATE_FAILED,
      errorMessage: 'Unable to update finalized features: etcd: deadline exceeded', results: [],
    });
  });
});
