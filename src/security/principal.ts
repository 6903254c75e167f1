// Who is on the other end of a connection, as Kafka's KafkaPrincipal and RequestContext name it.
import type { SecurityProtocol } from '../config/broker-config';

export interface KafkaPrincipal {
  /** 'User' for every principal Kafka's default builder makes. */
  readonly principalType: string;
  readonly name: string;
}

export const ANONYMOUS: KafkaPrincipal = { principalType: 'User', name: 'ANONYMOUS' };

/** 'User:alice', the form of super.users and of ACL principals. */
export function principalToString(p: KafkaPrincipal): string {
  return `${p.principalType}:${p.name}`;
}

/** Parses 'Type:name' (the name may contain ':'); null when there is no type. */
export function parsePrincipal(s: string): KafkaPrincipal | null {
  const i = s.indexOf(':');
  if (i <= 0) return null;
  return { principalType: s.slice(0, i), name: s.slice(i + 1) };
}

/** A connection's identity, as of this request (SASL re-authentication may change the principal). */
export interface Session {
  readonly principal: KafkaPrincipal;
  /** The client's IP address, without port (ACL hosts are matched against it). */
  readonly clientAddress: string;
  /** The listener the client connected to, upper-cased (Metadata advertises that listener's endpoints). */
  readonly listenerName: string;
  readonly securityProtocol: SecurityProtocol;
}
