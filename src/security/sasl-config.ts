// A SASL listener's settings from the broker config, with Kafka's key names and prefixes: each key is
// read as listener.name.<listener>.<mechanism>.<key>, then listener.name.<listener>.<key>, then
// <mechanism>.<key>, then <key> (listener and mechanism lower-cased), as ChannelBuilders and
// JaasContext look them up. Mechanisms: PLAIN (PlainLoginModule users), OAUTHBEARER (unsecured JWS,
// or JWTs against a JWKS with OAuthBearerValidatorCallbackHandler), and SCRAM-SHA-256/512 over the
// cluster's credentials. GSSAPI (Kafka's default) is refused with a clear error.
import { ConfigError } from '../config/definitions';
import { BrokerConfig, type SecurityProtocol } from '../config/broker-config';
import { parseJaasConfigProperty, type JaasLoginModule } from './jaas';
import { PlainSaslClient, PlainSaslServer, plainUsers, PLAIN_LOGIN_MODULE } from './plain';
import {
  OAuthBearerSaslServer, UnsecuredJwsValidator, JwksJwtValidator, JwksKeys, unsecuredValidatorOptions,
  OAUTHBEARER_LOGIN_MODULE, JWT_VALIDATOR_CALLBACK_HANDLER, type OAuthBearerValidator,
} from './oauthbearer';
import { createScramServer, isScramMechanism, ScramSaslClient } from './scram';
import type { SaslClient, SaslServer, ScramCredentialLookup, ScramMechanism } from './sasl';

/** The protocols whose connections authenticate with SASL first. */
export function isSaslProtocol(protocol: SecurityProtocol): boolean {
  return protocol === 'SASL_PLAINTEXT' || protocol === 'SASL_SSL';
}

export const SUPPORTED_MECHANISMS = ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512', 'OAUTHBEARER'] as const;

/** Most time an unauthenticated (or re-authenticating) connection has to finish its SASL exchange. */
export const SASL_AUTHENTICATION_TIMEOUT_MS = 30_000;

export interface SaslListenerSettings {
  /** In the configured order: SaslHandshake answers with this list. */
  readonly enabledMechanisms: readonly string[];
  /** A new server for each exchange, by mechanism. */
  readonly servers: ReadonlyMap<string, () => SaslServer>;
  /** connections.max.reauth.ms by mechanism; 0: a session lasts as long as its credential. */
  readonly maxReauthMs: ReadonlyMap<string, number>;
  /** connection.failed.authentication.delay.ms */
  readonly failedAuthenticationDelayMs: number;
  /** sasl.server.max.receive.size: the largest frame before authentication completes. */
  readonly maxReceiveSize: number;
  /** min(connections.max.idle.ms, SASL_AUTHENTICATION_TIMEOUT_MS): the deadline of an exchange. */
  readonly authenticationTimeoutMs: number;
}



/** A listener's view of the config: the first of the prefixed forms of a key that is set. */
export class ListenerSaslConfig {
  private readonly listenerPrefix: string;

  constructor(private readonly config: BrokerConfig, readonly listenerName: string) {
    this.listenerPrefix = `listener.name.${listenerName.toLowerCase()}.`;
  }

  /** The raw value of `key` for this listener (and mechanism, when given), or null. */
  raw(key: string, mechanism?: string): string | null {
    const mech = mechanism ? `${mechanism.toLowerCase()}.` : null;
    const candidates = [
      ...(mech ? [this.listenerPrefix + mech + key] : []),
      this.listenerPrefix + key,
      ...(mech ? [mech + key] : []),
    ];
    for (const k of candidates) {
      const v = this.config.original(k);
      if (v !== undefined) return v;
    }
    if (!BrokerConfig.isKnown(key)) return null;
    const value = this.config.get(key);
    return value === null ? null : Array.isArray(value) ? value.join(',') : String(value);
  }

  list(key: string, mechanism?: string): string[] {
    return (this.raw(key, mechanism) ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '');
  }

  number(key: string, mechanism?: string): number {
    const raw = this.raw(key, mechanism);
    const n = Number(raw);
    if (raw === null || raw.trim() === '' || !Number.isFinite(n)) throw new ConfigError(`Invalid value ${raw} for configuration ${key}: Not a number`, key, raw);
    return n;
  }

  /** The mechanism's login module (listener.name.<l>.<mechanism>.sasl.jaas.config and fallbacks). */
  jaas(mechanism: string): JaasLoginModule {
    const text = this.raw('sasl.jaas.config', mechanism);
    const key = `${this.listenerPrefix}${mechanism.toLowerCase()}.sasl.jaas.config`;
    if (text === null) {
      throw new ConfigError(`Could not find a '${this.listenerName.toLowerCase()}.KafkaServer' or 'KafkaServer' entry in the JAAS configuration: set ${key} (Fjord reads no JAAS file)`, key);
    }
    return parseJaasConfigProperty(text, key);
  }
}

/** `scramCredentials`: the cluster's SCRAM users (the broker's controller), read at each exchange. */
export function saslListenerSettings(config: BrokerConfig, listenerName: string, scramCredentials?: ScramCredentialLookup): SaslListenerSettings {
  const lc = new ListenerSaslConfig(config, listenerName);
  const enabledMechanisms = lc.list('sasl.enabled.mechanisms');
  const enabledKey = `${listenerName.toLowerCase()} listener's sasl.enabled.mechanisms`;
  if (enabledMechanisms.length === 0) throw new ConfigError(`No SASL mechanisms are enabled for the ${enabledKey}`, 'sasl.enabled.mechanisms');
  const servers = new Map<string, () => SaslServer>();
  const maxReauthMs = new Map<string, number>();
  for (const mechanism of enabledMechanisms) {
    if (mechanism === 'GSSAPI') {
      throw new ConfigError(`GSSAPI (Kerberos) is not supported by Fjord: set the ${enabledKey} to some of ${SUPPORTED_MECHANISMS.join(', ')} (Kafka's default is GSSAPI)`, 'sasl.enabled.mechanisms', mechanism);
    }
    servers.set(mechanism, serverFactory(lc, mechanism, scramCredentials));
    const reauth = lc.number('connections.max.reauth.ms', mechanism);
    maxReauthMs.set(mechanism, reauth > 0 ? reauth : 0);
  }
  const failedAuthenticationDelayMs = lc.number('connection.failed.authentication.delay.ms');
  const maxReceiveSize = lc.number('sasl.server.max.receive.size');
  return {
    enabledMechanisms, servers, maxReauthMs, failedAuthenticationDelayMs, maxReceiveSize,
    authenticationTimeoutMs: Math.min(config.getLong('connections.max.idle.ms'), SASL_AUTHENTICATION_TIMEOUT_MS),
  };
}

function serverFactory(lc: ListenerSaslConfig, mechanism: string, scramCredentials: ScramCredentialLookup | undefined): () => SaslServer {
  switch (mechanism) {
    case 'PLAIN': {
      const module = lc.jaas(mechanism);
      if (module.loginModule !== PLAIN_LOGIN_MODULE) {
        throw new ConfigError(`The PLAIN mechanism's JAAS config must use ${PLAIN_LOGIN_MODULE}, not ${module.loginModule}`);
      }
      const users = plainUsers(module);
      return () => new PlainSaslServer(users);
    }
    case 'OAUTHBEARER': {
      const validator = oauthBearerValidator(lc);
      return () => new OAuthBearerSaslServer(validator);
    }
    case 'SCRAM-SHA-256':
    case 'SCRAM-SHA-512': {
      if (!scramCredentials) throw new ConfigError(`SASL mechanism ${mechanism} needs the cluster's SCRAM credentials`, 'sasl.enabled.mechanisms', mechanism);
      return () => createScramServer(mechanism, scramCredentials);
    }
    default:
      throw new ConfigError(`Unsupported SASL mechanism ${mechanism}: Fjord supports ${SUPPORTED_MECHANISMS.join(', ')}`, 'sasl.enabled.mechanisms', mechanism);
  }
}

function oauthBearerValidator(lc: ListenerSaslConfig): OAuthBearerValidator {
  const mechanism = 'OAUTHBEARER';
  const module = lc.jaas(mechanism);
  if (module.loginModule !== OAUTHBEARER_LOGIN_MODULE) {
    throw new ConfigError(`The OAUTHBEARER mechanism's JAAS config must use ${OAUTHBEARER_LOGIN_MODULE}, not ${module.loginModule}`);
  }
  const handler = lc.raw('sasl.server.callback.handler.class', mechanism);
  if (handler === null || handler === '') return new UnsecuredJwsValidator(unsecuredValidatorOptions(module.options));
  if (handler !== JWT_VALIDATOR_CALLBACK_HANDLER) {
    throw new ConfigError(`Unsupported sasl.server.callback.handler.class ${handler}: Fjord has ${JWT_VALIDATOR_CALLBACK_HANDLER} (or none: unsecured tokens)`);
  }
  const jwksUrl = lc.raw('sasl.oauthbearer.jwks.endpoint.url', mechanism);
  if (jwksUrl === null || jwksUrl === '') throw new ConfigError(`${JWT_VALIDATOR_CALLBACK_HANDLER} needs sasl.oauthbearer.jwks.endpoint.url`, 'sasl.oauthbearer.jwks.endpoint.url');
  const jwksRefreshMs = lc.number('sasl.oauthbearer.jwks.endpoint.refresh.ms', mechanism);
  let keys: JwksKeys;
  try {
    keys = new JwksKeys(jwksUrl, jwksRefreshMs);
  } catch (err) {
    throw new ConfigError(`sasl.oauthbearer.jwks.endpoint.url ${jwksUrl}: ${(err as Error).message}`, 'sasl.oauthbearer.jwks.endpoint.url', jwksUrl);
  }
  return new JwksJwtValidator(keys, {
    expectedAudience: lc.list('sasl.oauthbearer.expected.audience', mechanism),
    expectedIssuer: lc.raw('sasl.oauthbearer.expected.issuer', mechanism),
    subClaimName: lc.raw('sasl.oauthbearer.sub.claim.name', mechanism) ?? 'sub',
    scopeClaimName: lc.raw('sasl.oauthbearer.scope.claim.name', mechanism) ?? 'scope',
    clockSkewSeconds: lc.number('sasl.oauthbearer.clock.skew.seconds', mechanism),
  });
}

/**
 * How this broker authenticates to the others on a SASL inter-broker listener (inter.broker.listener.name): a new client of
 * sasl.mechanism.inter.broker.protocol per connection, with the username and password options of
 * that mechanism's JAAS config on the listener (as Kafka's inter-broker clients use them); undefined
 * when the listener is not SASL.
 */
export function interBrokerSaslClient(config: BrokerConfig): (() => SaslClient) | undefined {
  const listener = config.interBrokerListener;
  if (!isSaslProtocol(listener.securityProtocol)) return undefined;
  const mechanism = config.getString('sasl.mechanism.inter.broker.protocol');
  const key = 'sasl.mechanism.inter.broker.protocol';
  if (mechanism === 'GSSAPI') {
    throw new ConfigError(`GSSAPI (Kerberos) is not supported by Fjord: set ${key} to PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 (Kafka's default is GSSAPI)`, key, mechanism);
  }
  const lc = new ListenerSaslConfig(config, listener.name);
  if (!lc.list('sasl.enabled.mechanisms').includes(mechanism)) {
    throw new ConfigError(`${key} ${mechanism} must be included in the ${listener.name.toLowerCase()} listener's sasl.enabled.mechanisms when SASL is used for inter-broker communication`, key, mechanism);
  }
  const options = lc.jaas(mechanism).options;
  const username = options.get('username');
  const password = options.get('password');
  if (username === undefined || password === undefined) {
    throw new ConfigError(`The ${mechanism} JAAS config of listener ${listener.name} needs username and password options: brokers authenticate to each other with them`, key);
  }
  if (mechanism === 'PLAIN') return () => new PlainSaslClient(username, password);
  if (isScramMechanism(mechanism)) return () => scramClient(mechanism, username, password);
  throw new ConfigError(`${key} ${mechanism} is not available for inter-broker connections in Fjord`, key, mechanism);
}

/** SCRAM's three steps as a SaslClient: client-first, client-final for the server-first, then the server-final checked. */
function scramClient(mechanism: ScramMechanism, username: string, password: string): SaslClient {
  const scram = new ScramSaslClient(mechanism, username, password);
  let step = 0;
  return {
    mechanism,
    evaluateChallenge(challenge: Buffer | null): Buffer | null {
      switch (step++) {
        case 0: return scram.firstMessage();
        case 1: return scram.finalMessage(challenge ?? Buffer.alloc(0));
        default:
          scram.verifyServerFinal(challenge ?? Buffer.alloc(0));
          return null;
      }
    },
  };
}
