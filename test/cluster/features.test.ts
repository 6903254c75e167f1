// The feature rules (Kafka 4.4's FeatureControlManager, messages as the 4.4 oracle answers them)
// and the single broker's levels in its MetadataStore: defaults, updates, persistence, epochs.
import { expect } from 'chai';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { ErrorCode } from '../../src/common/errors';
import {
  DEFAULT_FEATURE_LEVELS, Features, UpgradeType, planUpdates, storeFeatureLevels, type FeatureLevels, type FinalizedFeatures,
} from '../../src/cluster/features';
import { MetadataStore, SNAPSHOT_FILE } from '../../src/cluster/metadata-store';

const { UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE } = UpgradeType;

/** The refusal planUpdates gives for one update from `levels`, or 'ok'. */
function verdict(levels: FeatureLevels, feature: string, level: number, upgradeType: number = UPGRADE): string {
  const planned = planUpdates(levels, [{ feature, level, upgradeType }], 1);
  return planned.ok ? 'ok' : planned.message;
}

describe('cluster/features: the update rules', () => {
  const defaults = DEFAULT_FEATURE_LEVELS;

  it('finalizes a new cluster as Kafka 4.4 does: metadata.version 33, transaction.version 2, group.version 1', () => {
    expect(defaults).to.deep.equal({ 'metadata.version': 33, 'transaction.version': 2, 'group.version': 1, 'streams.version': 1, 'share.version': 2 });
  });

  it('refuses an unknown upgrade type, a negative level and levels out of the supported range', () => {
    expect(verdict(defaults, 'group.version', 1, 7)).to.equal(
      'Invalid update version 1 for feature group.version. The controller does not support the given upgrade type.');
    expect(verdict(defaults, 'group.version', -1)).to.equal('Invalid update version -1 for feature group.version. A feature version cannot be less than 0.');
    expect(verdict(defaults, 'metadata.version', 34)).to.equal(
      'Invalid update version 34 for feature metadata.version. Local controller 1 only supports versions 7-33');
    expect(verdict(defaults, 'group.version', 5)).to.equal('Invalid update version 5 for feature group.version. Local controller 1 only supports versions 0-1');
    expect(verdict(defaults, 'share.version', 3)).to.equal('Invalid update version 3 for feature share.version. Local controller 1 only supports versions 0-2');
    expect(verdict(defaults, 'eligible.leader.replicas.version', 1)).to.equal(
      'Invalid update version 1 for feature eligible.leader.replicas.version. Local controller 1 does not support this feature.');
    expect(verdict(defaults, 'nonsense', 1)).to.equal('Invalid update version 1 for feature nonsense. Local controller 1 does not support this feature.');
    expect(verdict(defaults, 'nonsense', 0)).to.equal('Invalid update version 0 for feature nonsense. Feature nonsense not found.');
  });

  it('lowers a level only with a downgrade type, and raises it only with UPGRADE', () => {
    expect(verdict(defaults, 'transaction.version', 1)).to.equal('Invalid update version 1 for feature transaction.version. ' +
      "Can't downgrade the version of this feature without setting the upgrade type to either safe or unsafe downgrade.");
    expect(verdict(defaults, 'transaction.version', 1, SAFE_DOWNGRADE)).to.equal('ok');
    expect(verdict(defaults, 'group.version', 0, UNSAFE_DOWNGRADE)).to.equal('ok');
    const lowered = { ...defaults, 'transaction.version': 1 };
    expect(verdict(lowered, 'transaction.version', 2, SAFE_DOWNGRADE)).to.equal(
      "Invalid update version 2 for feature transaction.version. Can't downgrade to a newer version.");
    expect(verdict(lowered, 'transaction.version', 2)).to.equal('ok');
  });

  it('refuses a metadata.version downgrade across a metadata change, safe or unsafe, and allows one that crosses none', () => {
    expect(verdict(defaults, 'metadata.version', 32, SAFE_DOWNGRADE)).to.equal('Unsupported metadata.version downgrade from 33 to 32. ' +
      'Refusing to perform the requested downgrade because it might delete metadata information.');
    expect(verdict(defaults, 'metadata.version', 20, UNSAFE_DOWNGRADE)).to.equal(
      'Unsupported metadata.version downgrade from 33 to 20. Unsafe metadata downgrade is not supported in this version.');
    // Kafka's didMetadataChange: 25, 24 did not change the format, 23 did; 13 did, 12 did not.
    expect(verdict({ 'metadata.version': 25 }, 'metadata.version', 23, SAFE_DOWNGRADE)).to.equal('ok');
    expect(verdict({ 'metadata.version': 25 }, 'metadata.version', 22, SAFE_DOWNGRADE)).to.match(/^Unsupported metadata.version downgrade from 25 to 22/);
    expect(verdict({ 'metadata.version': 13 }, 'metadata.version', 12, SAFE_DOWNGRADE)).to.match(/^Unsupported/);
    expect(verdict({ 'metadata.version': 12 }, 'metadata.version', 11, SAFE_DOWNGRADE)).to.equal('ok');
    expect(verdict({ 'metadata.version': 30 }, 'metadata.version', 33)).to.equal('ok');
  });

  it('never finalizes kraft.version (no KRaft quorum), and accepts it at 0', () => {
    expect(verdict(defaults, 'kraft.version', 1)).to.match(/^Invalid update version 1 for feature kraft.version\. .*KRaft quorum/);
    expect(verdict(defaults, 'kraft.version', 0)).to.equal('ok');
  });

  it('reports the refusal of the first refused feature in the order of Kafka\'s HashMap, as the 4.4 oracle does', () => {
    const planned = planUpdates(defaults, [
      { feature: 'transaction.version', level: 0, upgradeType: UPGRADE },
      { feature: 'group.version', level: 5, upgradeType: UPGRADE },
    ], 1);
    expect(planned).to.deep.equal({ ok: false,
      message: 'Invalid update version 5 for feature group.version. Local controller 1 only supports versions 0-1' });
  });

  it('refuses a level some registered broker does not support, naming it as Kafka does', () => {
    const brokers = [
      { brokerId: 0, supported: [{ name: 'transaction.version', minVersion: 0, maxVersion: 2 }] },
      { brokerId: 2, supported: [{ name: 'transaction.version', minVersion: 0, maxVersion: 1 }] },
      { brokerId: 3, supported: undefined },
    ];
    const refusal = (feature: string, level: number, among: typeof brokers) => {
      const planned = planUpdates({ 'metadata.version': 33 }, [{ feature, level, upgradeType: UPGRADE }], 0, among);
      return planned.ok ? 'ok' : planned.message;
    };
    expect(refusal('transaction.version', 2, brokers)).to.equal(
      'Invalid update version 2 for feature transaction.version. Broker 2 only supports versions 0-1');
    expect(refusal('transaction.version', 1, brokers)).to.equal(
      'Invalid update version 1 for feature transaction.version. Broker 3 does not support this feature.');
    expect(refusal('transaction.version', 2, brokers.slice(0, 1))).to.equal('ok');
  });

  it('applies every update of a request together, a level 0 removing the feature, or none when one is refused', () => {
    const both = planUpdates(defaults, [
      { feature: 'transaction.version', level: 1, upgradeType: SAFE_DOWNGRADE },
      { feature: 'group.version', level: 0, upgradeType: SAFE_DOWNGRADE },
    ], 1);
    expect(both).to.deep.equal({ ok: true, levels: { 'metadata.version': 33, 'transaction.version': 1, 'streams.version': 1, 'share.version': 2 } });
    const refused = planUpdates(defaults, [
      { feature: 'transaction.version', level: 1, upgradeType: SAFE_DOWNGRADE },
      { feature: 'group.version', level: 9, upgradeType: UPGRADE },
    ], 1);
    expect(refused.ok).to.equal(false);
  });
});

describe('cluster/features: a single broker\'s levels in its MetadataStore', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fjord-features-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('starts a new data dir at the defaults, keeps updates across a reopen, and raises the epoch on each change', async () => {
    let store = await MetadataStore.open(dir, 4);
    let features = await Features.start(storeFeatureLevels(store), 4);
    const first = features.finalized();
    expect(first.levels).to.deep.equal(DEFAULT_FEATURE_LEVELS);
    expect(features.transactionVersion()).to.equal(2);
    expect(features.groupVersion()).to.equal(1);

    const changes: FinalizedFeatures[] = [];
    features.on('change', (f: FinalizedFeatures) => changes.push(f));
    const result = await features.update([{ feature: 'transaction.version', level: 1, upgradeType: SAFE_DOWNGRADE }], false);
    expect(result).to.deep.equal({ errorCode: ErrorCode.NONE, errorMessage: null });
    expect(features.transactionVersion()).to.equal(1);
    expect(changes.map((c) => c.levels['transaction.version'])).to.deep.equal([1]);
    const second = features.finalized();
    expect(second.epoch).to.be.greaterThan(first.epoch);
    await store.close();

    store = await MetadataStore.open(dir, 4);
    features = await Features.start(storeFeatureLevels(store), 4);
    expect(features.finalized().levels).to.deep.equal({ 'metadata.version': 33, 'transaction.version': 1, 'group.version': 1, 'streams.version': 1, 'share.version': 2 });
    expect(features.finalized().epoch).to.be.at.least(second.epoch);
    await store.close();
  });

  it('changes nothing for validateOnly or a refused request', async () => {
    const store = await MetadataStore.open(dir, 0);
    const features = await Features.start(storeFeatureLevels(store), 0);
    const before = features.finalized();
    const validated = await features.update([{ feature: 'group.version', level: 0, upgradeType: SAFE_DOWNGRADE }], true);
    expect(validated.errorCode).to.equal(ErrorCode.NONE);
    const refused = await features.update([
      { feature: 'group.version', level: 0, upgradeType: SAFE_DOWNGRADE },
      { feature: 'metadata.version', level: 7, upgradeType: SAFE_DOWNGRADE },
    ], false);
    expect(refused.errorCode).to.equal(ErrorCode.INVALID_UPDATE_VERSION);
    expect(refused.errorMessage).to.equal('The update failed for all features since the following feature had an error: ' +
      'Unsupported metadata.version downgrade from 33 to 7. Refusing to perform the requested downgrade because it might delete metadata information.');
    expect(features.finalized()).to.deep.equal(before);
    await store.close();
  });

  it('refuses to start on levels this broker does not support (a newer version finalized them)', async () => {
    const store = await MetadataStore.open(dir, 0);
    store.setFinalizedFeatures({ 'metadata.version': 34, 'transaction.version': 2 });
    let refusal: Error | undefined;
    await Features.start(storeFeatureLevels(store), 0).catch((e: Error) => { refusal = e; });
    expect(refusal?.message).to.equal('Unable to start: this broker does not support finalized version 34 of metadata.version. ' +
      'It supports versions 7-33.');
    await store.close();
  });

  it('reads a snapshot written before features were kept (its checksum still holds) as a new cluster', async () => {
    let store = await MetadataStore.open(dir, 0);
    store.createTopic('old', [[0]]);
    await store.close();
    const file = path.join(dir, SNAPSHOT_FILE);
    expect(fs.readFileSync(file, 'utf8')).to.not.include('finalizedFeatures');
    store = await MetadataStore.open(dir, 0);
    expect(store.finalizedFeatures).to.equal(undefined);
    const features = await Features.start(storeFeatureLevels(store), 0);
    expect(features.finalized().levels).to.deep.equal(DEFAULT_FEATURE_LEVELS);
    expect(store.topic('old')).to.not.equal(undefined);
    await store.close();
    expect(fs.readFileSync(file, 'utf8')).to.include('finalizedFeatures');
  });
});
