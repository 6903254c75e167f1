// SCRAM for tests: AlterUserScramCredentials upsertions as Kafka's admin client builds them, and a
// whole SCRAM exchange against a credential lookup (the Controller, in a broker).
import { randomBytes } from 'node:crypto';
import type { ScramCredentialLookup, ScramMechanism } from '../../src/security/sasl';
import { ScramSaslClient, ScramSaslServer, saltedPassword, scramMechanismType } from '../../src/security/scram';

/** An upsertion as Kafka's admin client builds it: a random salt and the password salted client-side. */
export function upsertion(name: string, mechanism: ScramMechanism, password: string, iterations = 4096) {
  const salt = randomBytes(24);
  return { name, mechanism: scramMechanismType(mechanism), iterations, salt, saltedPassword: saltedPassword(mechanism, password, salt, iterations) };
}

/** Whether user/password authenticates with `mechanism` against these credentials (a whole exchange). */
export function authenticates(credentials: ScramCredentialLookup, mechanism: ScramMechanism, user: string, password: string): boolean {
  const server = new ScramSaslServer(mechanism, credentials);
  const client = new ScramSaslClient(mechanism, user, password);
  try {
    const serverFinal = server.evaluateResponse(client.finalMessage(server.evaluateResponse(client.firstMessage())));
    client.verifyServerFinal(serverFinal);
    return server.isComplete() && server.authorizationId() === user;
  } catch {
    return false;
  }
}
