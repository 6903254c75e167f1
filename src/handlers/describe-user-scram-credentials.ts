// DescribeUserScramCredentials (key 50), version 0 (KIP-554), as Kafka 4.4's ScramImage.describe answers.
// - DESCRIBE on CLUSTER, else CLUSTER_AUTHORIZATION_FAILED at the top and in one result per user asked.
// - No users (null or empty): every user with a credential, sorted. Otherwise each user named once, in
//   the order asked: a name given twice is DUPLICATE_RESOURCE ("Cannot describe SCRAM credentials for
//   the same user twice in a single request: NAME"), a user without credentials RESOURCE_NOT_FOUND
//   ("Attempt to describe a user credential that does not exist: NAME"; a name past 1,000 characters
//   is cut in the message, which must fit the protocol's 32,767-byte string).
// - Each credential is its mechanism and iterations (never the salt or keys), SCRAM-SHA-256 first
//   (Kafka's order is that of a HashMap of mechanisms, which its clients do not rely on).
import { ApiKey } from '../protocol/generated';
import { ErrorCode, errorMessage, quoteInMessage } from '../common/errors';
import { AclOperation, CLUSTER_RESOURCE_NAME, ResourceType } from '../security/acl';
import { SCRAM_MECHANISMS, scramMechanismType } from '../security/scram';
import type { Controller } from '../cluster/controller';
import { defineHandler } from './handler';

export interface DescribeUserScramCredentialsServices {
  readonly controller: Pick<Controller, 'scramCredentials' | 'scramUsers'>;
}

export const describeUserScramCredentials = defineHandler(ApiKey.DescribeUserScramCredentials, { minVersion: 0, maxVersion: 0 },
  (s: DescribeUserScramCredentialsServices) => (req, ctx) => {
    if (!ctx.authorize(AclOperation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_RESOURCE_NAME)) {
      const denied = { errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: errorMessage(ErrorCode.CLUSTER_AUTHORIZATION_FAILED) };
      return { throttleTimeMs: 0, ...denied, results: (req.users ?? []).map(() => ({ user: '', ...denied, credentialInfos: [] })) };
    }
    const asked = req.users?.map((u) => u.name) ?? [];
    const names = asked.length === 0 ? s.controller.scramUsers() : [...new Set(asked)];
    const results = names.map((user) => {
      if (asked.indexOf(user) !== asked.lastIndexOf(user)) {
        return { user, errorCode: ErrorCode.DUPLICATE_RESOURCE, errorMessage: `Cannot describe SCRAM credentials for the same user twice in a single request: ${quoteInMessage(user)}`, credentialInfos: [] };
      }
      const credentials = s.controller.scramCredentials(user);
      const credentialInfos = SCRAM_MECHANISMS.flatMap((m) => {
        const c = credentials[m];
        return c ? [{ mechanism: scramMechanismType(m), iterations: c.iterations }] : [];
      });
      if (credentialInfos.length === 0) {
        return { user, errorCode: ErrorCode.RESOURCE_NOT_FOUND, errorMessage: `Attempt to describe a user credential that does not exist: ${quoteInMessage(user)}`, credentialInfos };
      }
      return { user, errorCode: ErrorCode.NONE, errorMessage: null, credentialInfos };
    });
    return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, errorMessage: null, results };
  });
