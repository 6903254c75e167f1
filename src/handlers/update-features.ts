// UpdateFeatures (key 57), versions 0-2.
// - Changes the cluster's finalized feature levels (src/cluster/features.ts: Kafka 4.4's rules and
//   messages); in a cluster the change goes to etcd and every broker sees it.
// - v1+: UpgradeType (1 upgrade, 2 safe downgrade, 3 unsafe downgrade, anything else refused) and
//   ValidateOnly. v0's AllowDowngrade is ignored, as Kafka 4.4's controller ignores it (it reads only
//   UpgradeType, whose default is upgrade): a v0 request cannot downgrade.
// - All or nothing: the first feature refused fails the request with INVALID_UPDATE_VERSION and
//   Kafka's "The update failed for all features since..." message, with no per-feature results.
// - Success: v0-1 list each requested feature with NONE (message "NONE", as Kafka's
//   Errors.NONE.message()); v2 has no results.
// - etcd out of reach (a cluster): FEATURE_UPDATE_FAILED.
// - A message that would not fit a protocol string (it quotes a feature name of the maximum length)
//   is cut to fit: Kafka could not send it at all.
// - Without ALTER on the cluster: CLUSTER_AUTHORIZATION_FAILED, no feature results, nothing changed.
import { ApiKey } from '../protocol/generated';
import { MAX_STRING_LENGTH } from '../protocol/encoding';
import { ErrorCode } from '../common/errors';
import { UpgradeType, type Features, type UpdateResult } from '../cluster/features';
import { AclOperation } from '../security/acl';
import { authorizeCluster, CLUSTER_AUTHORIZATION_MESSAGE } from './shared/authorization';
import { defineHandler } from './handler';

export interface UpdateFeaturesServices {
  readonly features: Pick<Features, 'update'>;
}

export const updateFeatures = defineHandler(ApiKey.UpdateFeatures, { minVersion: 0, maxVersion: 2 }, (s: UpdateFeaturesServices) => async (req, ctx) => {
  if (!authorizeCluster(ctx, AclOperation.ALTER)) {
    return { throttleTimeMs: 0, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: CLUSTER_AUTHORIZATION_MESSAGE, results: [] };
  }
  const updates = req.featureUpdates.map((u) => ({
    feature: u.feature,
    level: u.maxVersionLevel,
    upgradeType: u.upgradeType ?? UpgradeType.UPGRADE,
  }));
  const result: UpdateResult = await s.features.update(updates, req.validateOnly ?? false).catch((err: Error) => ({
    errorCode: ErrorCode.FEATURE_UPDATE_FAILED, errorMessage: `Unable to update finalized features: ${err.message}`,
  }));
  const succeeded = result.errorCode === ErrorCode.NONE;
  return {
    throttleTimeMs: 0,
    errorCode: result.errorCode,
    errorMessage: result.errorMessage === null ? null : fitted(result.errorMessage),
    results: succeeded && ctx.apiVersion < 2
      ? updates.map(({ feature }) => ({ feature, errorCode: ErrorCode.NONE, errorMessage: 'NONE' }))
      : [],
  };
});

function fitted(message: string): string {
  let fitting = message;
  for (let excess = Buffer.byteLength(fitting) - MAX_STRING_LENGTH; excess > 0; excess = Buffer.byteLength(fitting) - MAX_STRING_LENGTH) {
    fitting = fitting.slice(0, fitting.length - Math.ceil(excess / 4));
  }
  return fitting;
}
