// AlterUserScramCredentials (key 51), version 0 (KIP-554), as Kafka 4.4's controller answers it.
// - ALTER on CLUSTER, else CLUSTER_AUTHORIZATION_FAILED for every user named, sorted (Kafka's
//   AlterUserScramCredentialsRequest.getErrorResponse).
// - Deletions and upsertions (salt and salted password, computed by the client) are checked as Kafka's
//   ScramControlManager checks them (src/cluster/scram-alterations.ts: DUPLICATE_RESOURCE for a user
//   altered twice, UNACCEPTABLE_CREDENTIAL for an empty name or iterations outside 4096..16384,
//   UNSUPPORTED_SASL_MECHANISM, RESOURCE_NOT_FOUND for deleting what does not exist); the accepted
//   ones are stored together (durably, or in etcd for every broker) before the answer, and the next
//   authentication of those users reads them.
import { ApiKey } from '../protocol/generated';
import { ErrorCode, errorMessage } from '../common/errors';
import { AclOperation, CLUSTER_RESOURCE_NAME, ResourceType } from '../security/acl';
import type { Controller } from '../cluster/controller';
import { defineHandler } from './handler';

export interface AlterUserScramCredentialsServices {
  readonly controller: Pick<Controller, 'alterUserScramCredentials'>;
}

export const alterUserScramCredentials = defineHandler(ApiKey.AlterUserScramCredentials, { minVersion: 0, maxVersion: 0 },
  (s: AlterUserScramCredentialsServices) => async (req, ctx) => {
    if (!ctx.authorize(AclOperation.ALTER, ResourceType.CLUSTER, CLUSTER_RESOURCE_NAME)) {
      const users = [...new Set([...req.deletions, ...req.upsertions].map((a) => a.name))].sort();
      const errorCode = ErrorCode.CLUSTER_AUTHORIZATION_FAILED;
      return { throttleTimeMs: 0, results: users.map((user) => ({ user, errorCode, errorMessage: errorMessage(errorCode) })) };
    }
    return { throttleTimeMs: 0, results: await s.controller.alterUserScramCredentials(req.deletions, req.upsertions) };
  });
