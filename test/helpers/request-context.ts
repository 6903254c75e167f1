// The session part of a RequestContext for tests that call a handler directly: an anonymous
// PLAINTEXT client that every check allows.
import { ANONYMOUS, type Session } from '../../src/security/principal';
import { ALLOW_EVERYTHING } from '../../src/security/acl';

const session: Session = { principal: ANONYMOUS, clientAddress: '127.0.0.1', listenerName: 'PLAINTEXT', securityProtocol: 'PLAINTEXT' };

export const allowAllRequest = {
  session,
  authorize: ALLOW_EVERYTHING.authorize.bind(null, session),
  authorizeByResourceType: ALLOW_EVERYTHING.authorizeByResourceType.bind(null, session),
};
