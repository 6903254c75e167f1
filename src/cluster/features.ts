// Kafka's feature flags (KIP-584, KIP-1022): the features this broker supports, the levels the
// cluster finalized (with an epoch that rises on every metadata change, Kafka's
// FinalizedFeaturesEpoch), and UpdateFeatures' rules for changing them, as Kafka 4.4's
// FeatureControlManager and QuorumFeatures have them.
//
// The levels are cluster metadata: a single broker keeps them in its MetadataStore, a cluster in
// etcd (`/features`), read by every broker. As in Kafka there is no config for them: a new
// cluster starts at Kafka 4.4's defaults and only UpdateFeatures changes them.
//
// One request's updates are checked together against the levels as read, then written in one
// compare-and-set: a write another broker made meanwhile makes it read and check again.
import { EventEmitter } from 'events';
import { ErrorCode } from '../common/errors';
import type { EtcdCluster } from './etcd/etcd-cluster';
import type { FeatureLevels, MetadataStore } from './metadata-store';

export type { FeatureLevels } from './metadata-store';

export const METADATA_VERSION = 'metadata.version';
export const KRAFT_VERSION = 'kraft.version';
export const TRANSACTION_VERSION = 'transaction.version';
export const GROUP_VERSION = 'group.version';
export const STREAMS_VERSION = 'streams.version';
export const SHARE_VERSION = 'share.version';

interface VersionRange {
  readonly minVersion: number;
  readonly maxVersion: number;
}

export interface SupportedFeature extends VersionRange {
  readonly name: string;
}

/**
 * What this broker supports, in the order Kafka 4.4 lists them. Kafka's own ranges where Fjord
 * implements the feature; kraft.version as Kafka lists it, though Fjord's metadata is no KRaft
 * quorum (it is never finalized). ELR is not implemented yet: 0-0 (the README names it as left for
 * later). share.version has no dependencies in Kafka 4.4: 1 serves share groups, 2 their dead-letter queue.
 */
export const SUPPORTED_FEATURES: readonly SupportedFeature[] = [
  { name: GROUP_VERSION, minVersion: 0, maxVersion: 1 },
  { name: KRAFT_VERSION, minVersion: 0, maxVersion: 1 },
  { name: METADATA_VERSION, minVersion: 7, maxVersion: 33 },
  { name: SHARE_VERSION, minVersion: 0, maxVersion: 2 },
  { name: STREAMS_VERSION, minVersion: 0, maxVersion: 1 },
  { name: TRANSACTION_VERSION, minVersion: 0, maxVersion: 2 },
  { name: 'eligible.leader.replicas.version', minVersion: 0, maxVersion: 0 },
];

/** A new cluster's levels: Kafka 4.4's defaults for the features Fjord implements. */
export const DEFAULT_FEATURE_LEVELS: FeatureLevels = Object.freeze({
  [METADATA_VERSION]: 33, [TRANSACTION_VERSION]: 2, [GROUP_VERSION]: 1, [STREAMS_VERSION]: 1, [SHARE_VERSION]: 2,
});

/** The metadata.version levels (7-33) that changed the metadata format: Kafka's didMetadataChange. */
const METADATA_CHANGED_AT = new Set([7, 8, 11, 13, 14, 15, 17, 23, 30, 32, 33]);

/** UpdateFeatures' upgrade types (v1+; a v0 request's are all UPGRADE). */
export const UpgradeType = { UPGRADE: 1, SAFE_DOWNGRADE: 2, UNSAFE_DOWNGRADE: 3 } as const;

export interface FeatureUpdate {
  readonly feature: string;
  readonly level: number;
  /** Any int8: an unknown one is refused as Kafka refuses it. */
  readonly upgradeType: number;
}

export interface FinalizedFeatures {
  /** Levels above 0 only, as Kafka lists them. */
  readonly levels: FeatureLevels;
  /** Rises on every metadata change (Kafka's metadata offset; here the store's version or etcd's revision). */
  readonly epoch: number;
}

/** Where the levels live: the single broker's MetadataStore, or etcd. */
export interface FeatureLevelsStore {
  /** The levels as last written (undefined: never, a new cluster) and the metadata's epoch now. */
  read(): { levels: FeatureLevels | undefined; epoch: number };
  /** Writes `next` if the levels are still the object `expected` (as read); resolves whether it applied. */
  write(expected: FeatureLevels | undefined, next: FeatureLevels): Promise<boolean>;
  /** Calls `listener` after any metadata change (the levels may be the same). */
  onChange(listener: () => void): void;
  /** The registered brokers and the features each supports (a cluster's; a single broker has only itself). */
  brokers(): BrokerFeatures[];
}

/** A broker's supported features as it registered them (undefined: it registered none, a broker from before features). */
export interface BrokerFeatures {
  readonly brokerId: number;
  readonly supported: readonly SupportedFeature[] | undefined;
}

/** The single broker's levels: its MetadataStore, durable before a write resolves. */
export function storeFeatureLevels(store: MetadataStore): FeatureLevelsStore {
  const listeners: (() => void)[] = [];
  return {
    read: () => ({ levels: store.finalizedFeatures, epoch: store.version }),
    write: async (expected, next) => {
      if (store.finalizedFeatures !== expected) return false;
      store.setFinalizedFeatures(next);
      for (const listener of listeners) listener();
      await store.persist();
      return true;
    },
    onChange: (listener) => listeners.push(listener),
    brokers: () => [],
  };
}

/** A cluster's levels: etcd's `/features`, read from the broker's metadata cache. */
export function etcdFeatureLevels(cluster: EtcdCluster): FeatureLevelsStore {
  const cache = cluster.cache;
  return {
    read: () => ({ levels: cache.finalizedFeatures(), epoch: cache.revision }),
    write: async (expected, next) => {
      if (cache.finalizedFeatures() !== expected) return false;
      return cluster.putFinalizedFeatures(next, cache.finalizedFeaturesModRevision());
    },
    onChange: (listener) => cache.on('change', listener),
    brokers: () => cache.brokers().map((b) => ({ brokerId: b.brokerId, supported: b.supportedFeatures })),
  };
}

/** How many times an update reads and checks again after losing a race to another write. */
const MAX_UPDATE_ATTEMPTS = 5;

/** UpdateFeatures' answer: NONE, or the error of the whole request (Kafka's v1+ answer has no other). */
export interface UpdateResult {
  errorCode: number;
  errorMessage: string | null;
}

/** What Kafka's QuorumController puts before the refusal of the feature it stopped at. */
const REFUSED_PREFIX = 'The update failed for all features since the following feature had an error: ';

/**
 * The cluster's features as this broker sees them. Emits 'change' (FinalizedFeatures) when the
 * finalized levels change, whichever broker changed them.
 */
export class Features extends EventEmitter {
  private seen: FeatureLevels | undefined;

  private constructor(private readonly store: FeatureLevelsStore, private readonly nodeId: number) {
    super();
    this.seen = store.read().levels;
    store.onChange(() => {
      const { levels } = store.read();
      if (levels === this.seen) return;
      this.seen = levels;
      this.emit('change', this.finalized());
    });
  }

  /**
   * Reads the levels; a new cluster's are set to the defaults first (by whichever broker comes first).
   * Throws, as a Kafka broker refuses to register, if a level is finalized that this broker does not
   * support (a cluster a newer version finalized).
   */
  static async start(store: FeatureLevelsStore, nodeId: number): Promise<Features> {
    if (store.read().levels === undefined) await store.write(undefined, DEFAULT_FEATURE_LEVELS);
    const features = new Features(store, nodeId);
    for (const [name, level] of Object.entries(features.finalized().levels)) {
      const supported = rangeOf(SUPPORTED_FEATURES, name);
      if (level < supported.minVersion || level > supported.maxVersion) {
        throw new Error(`Unable to start: this broker does not support finalized version ${level} of ${name}. ` +
          `It supports versions ${versionRange(supported)}.`);
      }
    }
    return features;
  }

  supported(): readonly SupportedFeature[] {
    return SUPPORTED_FEATURES;
  }

  finalized(): FinalizedFeatures {
    const { levels, epoch } = this.store.read();
    return { levels: levels ?? DEFAULT_FEATURE_LEVELS, epoch };
  }

  /** A feature's finalized level (0: not finalized). */
  level(name: string): number {
    return this.finalized().levels[name] ?? 0;
  }

  /** transaction.version: 2 is KIP-890 part 2 (an epoch bump per transaction). */
  transactionVersion(): number {
    return this.level(TRANSACTION_VERSION);
  }

  /** group.version: 1 enables KIP-848's consumer groups. */
  groupVersion(): number {
    return this.level(GROUP_VERSION);
  }

  /** streams.version: 1 enables KIP-1071's streams groups. */
  streamsVersion(): number {
    return this.level(STREAMS_VERSION);
  }

  /** share.version: 1 enables KIP-932's share groups, 2 their dead-letter queue (KIP-1191). */
  shareVersion(): number {
    return this.level(SHARE_VERSION);
  }

  /** UpdateFeatures: every update checked, then all written at once (none if one is refused or validateOnly). */
  async update(updates: readonly FeatureUpdate[], validateOnly: boolean): Promise<UpdateResult> {
    for (let attempt = 1; ; attempt++) {
      const { levels } = this.store.read();
      const current = levels ?? DEFAULT_FEATURE_LEVELS;
      const planned = planUpdates(current, updates, this.nodeId, this.store.brokers());
      if (!planned.ok) return { errorCode: ErrorCode.INVALID_UPDATE_VERSION, errorMessage: REFUSED_PREFIX + planned.message };
      if (validateOnly || sameLevels(current, planned.levels) || await this.store.write(levels, planned.levels)) {
        return { errorCode: ErrorCode.NONE, errorMessage: null };
      }
      if (attempt === MAX_UPDATE_ATTEMPTS) {
        return { errorCode: ErrorCode.FEATURE_UPDATE_FAILED, errorMessage: `The finalized features changed ${attempt} times while this update was checked.` };
      }
    }
  }
}

function sameLevels(a: FeatureLevels, b: FeatureLevels): boolean {
  const names = Object.keys(a);
  return names.length === Object.keys(b).length && names.every((name) => a[name] === b[name]);
}

/**
 * The levels after `updates`, or the refusal of the first one Kafka's FeatureControlManager would
 * refuse, with its message. `controllerId` names the node in "Local controller N" as Kafka does;
 * every registered broker must support the new level too ("Broker N ...").
 */
export function planUpdates(current: FeatureLevels, updates: readonly FeatureUpdate[], controllerId: number,
  brokers: readonly BrokerFeatures[] = []): { ok: true; levels: FeatureLevels } | { ok: false; message: string } {
  const next: Record<string, number> = { ...current };
  for (const update of inJavaHashMapOrder(updates)) {
    const refusal = refusalOf(update, current[update.feature] ?? 0, controllerId, brokers);
    if (refusal !== null) return { ok: false, message: refusal };
    if (update.level === 0) delete next[update.feature];
    else next[update.feature] = update.level;
  }
  return { ok: true, levels: next };
}

function refusalOf({ feature, level, upgradeType }: FeatureUpdate, currentLevel: number, controllerId: number,
  brokers: readonly BrokerFeatures[]): string | null {
  const invalid = (reason: string) => `Invalid update version ${level} for feature ${feature}. ${reason}`;
  if (upgradeType < UpgradeType.UPGRADE || upgradeType > UpgradeType.UNSAFE_DOWNGRADE) {
    return invalid('The controller does not support the given upgrade type.');
  }
  if (level < 0) return invalid('A feature version cannot be less than 0.');
  const unsupported = reasonNotSupported(level, `Local controller ${controllerId}`, rangeOf(SUPPORTED_FEATURES, feature)) ??
    brokers.map((b) => reasonNotSupported(level, `Broker ${b.brokerId}`, rangeOf(b.supported ?? [], feature))).find((r) => r !== null);
  if (unsupported) return invalid(unsupported);
  if (level < currentLevel && upgradeType === UpgradeType.UPGRADE) {
    return invalid("Can't downgrade the version of this feature without setting the upgrade type to either safe or unsafe downgrade.");
  }
  if (level > currentLevel && upgradeType !== UpgradeType.UPGRADE) return invalid("Can't downgrade to a newer version.");
  if (feature === METADATA_VERSION && level < currentLevel && metadataChangedBetween(level, currentLevel)) {
    const reason = upgradeType === UpgradeType.UNSAFE_DOWNGRADE ? 'Unsafe metadata downgrade is not supported in this version.'
      : 'Refusing to perform the requested downgrade because it might delete metadata information.';
    return `Unsupported metadata.version downgrade from ${currentLevel} to ${level}. ${reason}`;
  }
  // Kafka moves its Raft quorum to kraft.version 1 (dynamic voters); Fjord has no quorum to move.
  if (feature === KRAFT_VERSION && level !== currentLevel) {
    return invalid('Fjord keeps its metadata in its data directory or in etcd, not in a KRaft quorum: kraft.version stays 0.');
  }
  if (!SUPPORTED_FEATURES.some((f) => f.name === feature)) return invalid(`Feature ${feature} not found.`);
  return null;
}

/**
 * The updates as Kafka's controller walks them: put in a java.util.HashMap by feature name (a name
 * given twice keeps its first place and its last update), then iterated bucket by bucket, which
 * decides which refusal a request with several refused features gets.
 */
function inJavaHashMapOrder(updates: readonly FeatureUpdate[]): FeatureUpdate[] {
  const byName = new Map<string, FeatureUpdate>();
  for (const update of updates) byName.set(update.feature, update);
  let capacity = 16; // HashMap's default, doubled while more than 3/4 full
  while (byName.size > capacity * 0.75) capacity *= 2;
  const bucketOf = (name: string) => {
    const hash = javaStringHash(name);
    return (hash ^ (hash >>> 16)) & (capacity - 1);
  };
  // Array.prototype.sort is stable: within a bucket, insertion order.
  return [...byName.values()].sort((a, b) => bucketOf(a.feature) - bucketOf(b.feature));
}

/** Java's String.hashCode (over UTF-16 code units, as JavaScript strings are). */
function javaStringHash(s: string): number {
  let hash = 0;
  for (let i = 0; i < s.length; i++) hash = (Math.imul(hash, 31) + s.charCodeAt(i)) | 0;
  return hash;
}

/** A feature's range in a list of supported features; 0-0 (Kafka's DISABLED) if it is not there. */
function rangeOf(supported: readonly SupportedFeature[], name: string): VersionRange {
  return supported.find((f) => f.name === name) ?? { minVersion: 0, maxVersion: 0 };
}

/** Kafka's QuorumFeatures.reasonNotSupported: why `what` cannot take `level`, or null. */
function reasonNotSupported(level: number, what: string, range: VersionRange): string | null {
  if (level >= range.minVersion && level <= range.maxVersion) return null;
  return range.maxVersion === 0 ? `${what} does not support this feature.` : `${what} only supports versions ${versionRange(range)}`;
}

/** Kafka's MetadataVersion.checkIfMetadataChanged for a downgrade: a format change above `to`, up to `from`. */
function metadataChangedBetween(to: number, from: number): boolean {
  for (let level = from; level > to; level--) if (METADATA_CHANGED_AT.has(level)) return true;
  return false;
}

/** Kafka's VersionRange.toString. */
function versionRange({ minVersion, maxVersion }: VersionRange): string {
  return minVersion === maxVersion ? `${minVersion}` : `${minVersion}-${maxVersion}`;
}
