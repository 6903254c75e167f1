// The request-level checks ShareFetch and ShareAcknowledge share (handlers/shared/share-requests.ts),
// in Kafka's order: share.version, the group id, READ on the group, the member id.
import { expect } from 'chai';
import { ErrorCode } from '../../src/common/errors';
import type { RequestContext } from '../../src/handlers/handler';
import { checkShareRequest } from '../../src/handlers/shared/share-requests';
import { AclOperation, ResourceType } from '../../src/security/acl';

describe('checkShareRequest', () => {
  const enabled = { shareVersion: () => 1 };
  const asked: string[] = [];
  const ctx = {
    authorize: (operation: AclOperation, resourceType: ResourceType, name: string) => {
      asked.push(`${operation}:${resourceType}:${name}`);
      return name !== 'secret';
    },
  } as unknown as RequestContext;
  const memberId = 'a-member';

  it('gives the ids of a valid request, READ on the group asked', () => {
    asked.length = 0;
    expect(checkShareRequest(enabled, ctx, 'g', memberId)).to.deep.equal({ groupId: 'g', memberId });
    expect(asked).to.deep.equal([`${AclOperation.READ}:${ResourceType.GROUP}:g`]);
  });

  it('refuses in order: share.version 0, no group id, no READ, a bad member id', () => {
    expect(checkShareRequest({ shareVersion: () => 0 }, ctx, null, null)).to.deep.equal({ errorCode: ErrorCode.UNSUPPORTED_VERSION, errorMessage: null });
    expect(checkShareRequest(enabled, ctx, null, null)).to.deep.equal({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Invalid group id in the request.' });
    expect(checkShareRequest(enabled, ctx, 'secret', null)).to.deep.equal({ errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, errorMessage: null });
    for (const bad of [null, '', 'x'.repeat(37)]) {
      expect(checkShareRequest(enabled, ctx, 'g', bad)).to.deep.equal({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Invalid member id in the request.' });
    }
    expect(checkShareRequest(enabled, ctx, 'g', 'x'.repeat(36))).to.deep.equal({ groupId: 'g', memberId: 'x'.repeat(36) });
  });
});
