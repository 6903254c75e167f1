// TLS for SSL and SASL_SSL listeners and for the broker's own connections to other brokers, from
// Kafka's ssl.* configs (each also per listener: listener.name.<listener>.ssl.*), as Kafka's
// DefaultSslEngineFactory reads them:
// - Key store: PEM (ssl.keystore.location, one file with the private key and its certificate chain,
//   or ssl.keystore.certificate.chain + ssl.keystore.key inline; ssl.key.password for an encrypted
//   key) or PKCS12 (ssl.keystore.location with ssl.keystore.password). JKS is refused: Node has no
//   reader for it.
// - Trust store: PEM (ssl.truststore.location or ssl.truststore.certificates); without one, Node's
//   own trusted authorities (Kafka: the JVM's).
// - ssl.client.auth (required | requested | none), ssl.enabled.protocols (the lowest to the highest
//   listed), ssl.cipher.suites (IANA names as Java takes them, or OpenSSL names),
//   ssl.endpoint.identification.algorithm (https: the broker checks the host name of the brokers it
//   connects to).
// - The principal of a client certificate: its subject in RFC 2253 form, as Java prints it (most
//   specific first: "CN=client,OU=eng,O=acme"), through ssl.principal.mapping.rules.
import { readFileSync } from 'node:fs';
import * as tls from 'node:tls';
import { X509Certificate } from 'node:crypto';
import { ConfigError, type BrokerConfig } from '../config/broker-config';
import { SslPrincipalMapper } from './ssl-principal-mapper';
import { ANONYMOUS, type KafkaPrincipal } from './principal';

export type SslClientAuth = 'required' | 'requested' | 'none';

/** A listener's TLS server side. */
export interface ServerTls {
  /** The key store, trust store, versions and ciphers (checked: a context was made from them). */
  readonly options: tls.SecureContextOptions;
  readonly clientAuth: SslClientAuth;
  readonly principalMapper: SslPrincipalMapper;
}

/** TLS options of the broker's own connections to a listener of other brokers. */
export interface ClientTls {
  readonly secureContext: tls.SecureContext;
  /** ssl.endpoint.identification.algorithm=https: the peer's certificate must name the host dialled. */
  readonly checkHostName: boolean;
}

const TLS_VERSIONS: readonly tls.SecureVersion[] = ['TLSv1', 'TLSv1.1', 'TLSv1.2', 'TLSv1.3'];

/**
 * The TLS server of an SSL or SASL_SSL listener; ConfigError (at start-up, as Kafka's) for a
 * listener without a key store or with settings Node cannot honour.
 */
export function serverTls(config: BrokerConfig, listenerName: string): ServerTls {
  const value = (name: string) => config.listenerValue(listenerName, name);
  const options = contextOptions(config, listenerName);
  if (options.key === undefined && options.pfx === undefined) {
    throw new ConfigError(`Listener ${listenerName} uses TLS but has no key store: set ssl.keystore.location ` +
      '(PEM or PKCS12), or ssl.keystore.certificate.chain and ssl.keystore.key', 'ssl.keystore.location', null);
  }
  createContext(options);
  return {
    options,
    clientAuth: value('ssl.client.auth') as SslClientAuth,
    principalMapper: new SslPrincipalMapper(value('ssl.principal.mapping.rules') as string),
  };
}

/** The TLS client side of connections to the inter-broker listener (its key store is the client certificate). */
export function clientTls(config: BrokerConfig, listenerName: string): ClientTls {
  const algorithm = config.listenerValue(listenerName, 'ssl.endpoint.identification.algorithm') as string | null;
  return {
    secureContext: createContext(contextOptions(config, listenerName)),
    checkHostName: (algorithm ?? '').toLowerCase() === 'https',
  };
}

function createContext(options: tls.SecureContextOptions): tls.SecureContext {
  try {
    return tls.createSecureContext(options);
  } catch (e) {
    // A wrong key password, a key that does not match its certificate, an unknown cipher...
    throw new ConfigError(`Invalid TLS configuration: ${(e as Error).message}`, 'ssl.keystore.location', null);
  }
}

function contextOptions(config: BrokerConfig, listenerName: string): tls.SecureContextOptions {
  const value = (name: string) => config.listenerValue(listenerName, name) as string | null;
  const options: tls.SecureContextOptions = { ...keyStore(value), ...trustStore(value) };
  const protocols = config.listenerValue(listenerName, 'ssl.enabled.protocols') as string[];
  const versions = protocols.map((p) => {
    const version = TLS_VERSIONS.find((v) => v === p);
    if (!version) throw new ConfigError(`Unsupported TLS protocol ${p} in ssl.enabled.protocols (supported: ${TLS_VERSIONS.join(', ')})`, 'ssl.enabled.protocols', protocols.join(','));
    return TLS_VERSIONS.indexOf(version);
  });
  if (versions.length === 0) throw new ConfigError('ssl.enabled.protocols is empty', 'ssl.enabled.protocols', '');
  options.minVersion = TLS_VERSIONS[Math.min(...versions)];
  options.maxVersion = TLS_VERSIONS[Math.max(...versions)];
  const protocol = value('ssl.protocol') ?? 'TLS';
  if (!['TLS', 'TLSv1', 'TLSv1.1', 'TLSv1.2', 'TLSv1.3'].includes(protocol)) {
    throw new ConfigError(`Unsupported TLS protocol ${protocol}`, 'ssl.protocol', protocol);
  }
  const suites = config.listenerValue(listenerName, 'ssl.cipher.suites') as string[];
  if (suites.length > 0) options.ciphers = suites.map(openSslCipherName).join(':');
  return options;
}

function keyStore(value: (name: string) => string | null): tls.SecureContextOptions {
  const type = (value('ssl.keystore.type') ?? 'JKS').toUpperCase();
  const location = value('ssl.keystore.location');
  const chain = value('ssl.keystore.certificate.chain');
  const key = value('ssl.keystore.key');
  const keyPassword = value('ssl.key.password') ?? undefined;
  if (chain !== null || key !== null) {
    if (chain === null || key === null) {
      throw new ConfigError('ssl.keystore.certificate.chain and ssl.keystore.key must be set together', chain === null ? 'ssl.keystore.certificate.chain' : 'ssl.keystore.key', null);
    }
    if (location !== null) throw new ConfigError('Both SSL key store location and separate private key are specified.', 'ssl.keystore.location', location);
    if (type !== 'PEM') throw new ConfigError(`Invalid value ${type} for configuration ssl.keystore.type: an inline key store is PEM`, 'ssl.keystore.type', type);
    return { cert: chain, key, passphrase: keyPassword };
  }
  if (location === null) return {};
  const contents = readStore(location, 'ssl.keystore.location');
  if (type === 'PEM') {
    if (value('ssl.keystore.password') !== null) {
      throw new ConfigError('SSL key store password cannot be specified with PEM format, only key password may be specified', 'ssl.keystore.password', '[hidden]');
    }
    // One file holds both: each option takes the blocks of its kind.
    return { cert: contents, key: contents, passphrase: keyPassword };
  }
  if (type === 'PKCS12') return { pfx: contents, passphrase: value('ssl.keystore.password') ?? keyPassword };
  throw unsupportedStore('ssl.keystore.type', type, 'PEM or PKCS12');
}

function trustStore(value: (name: string) => string | null): tls.SecureContextOptions {
  const type = (value('ssl.truststore.type') ?? 'JKS').toUpperCase();
  const location = value('ssl.truststore.location');
  const certificates = value('ssl.truststore.certificates');
  if (certificates !== null) {
    if (location !== null) throw new ConfigError('Both SSL trust store location and separate trust certificates are specified.', 'ssl.truststore.location', location);
    if (type !== 'PEM') throw new ConfigError(`Invalid value ${type} for configuration ssl.truststore.type: inline trust certificates are PEM`, 'ssl.truststore.type', type);
    return { ca: certificates };
  }
  if (location === null) return {};
  if (type !== 'PEM') throw unsupportedStore('ssl.truststore.type', type, 'PEM');
  return { ca: readStore(location, 'ssl.truststore.location') };
}

function readStore(location: string, key: string): Buffer {
  try {
    return readFileSync(location);
  } catch (e) {
    throw new ConfigError(`Failed to load SSL store ${location}: ${(e as Error).message}`, key, location);
  }
}

function unsupportedStore(key: string, type: string, supported: string): ConfigError {
  return new ConfigError(`Invalid value ${type} for configuration ${key}: Fjord reads ${supported} stores only`, key, type);
}

/**
 * Java's (IANA) cipher suite names in OpenSSL's: TLS 1.3 suites are named alike;
 * TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 is ECDHE-RSA-AES128-GCM-SHA256. OpenSSL names pass through.
 */
export function openSslCipherName(name: string): string {
  const m = /^TLS_(.+)_WITH_(.+)$/.exec(name);
  if (!m) return name;
  const exchange = m[1].replace(/_/g, '-').replace(/^RSA$/, '');
  const cipher = m[2]
    .replace(/^AES_(128|256)_GCM_/, 'AES$1-GCM-')
    .replace(/^AES_(128|256)_CBC_SHA$/, 'AES$1-SHA')
    .replace(/^AES_(128|256)_CBC_/, 'AES$1-')
    .replace(/^CHACHA20_POLY1305_SHA256$/, 'CHACHA20-POLY1305')
    .replace(/_/g, '-');
  return exchange === '' ? cipher : `${exchange}-${cipher}`;
}

/**
 * The principal of a TLS connection, as Kafka's DefaultKafkaPrincipalBuilder makes it: ANONYMOUS
 * without a client certificate, else the certificate's subject through the mapping rules; null when
 * no rule applies (Kafka fails the authentication).
 */
export function certificatePrincipal(socket: tls.TLSSocket, mapper: SslPrincipalMapper): KafkaPrincipal | null {
  const cert = socket.getPeerX509Certificate();
  if (!cert) return ANONYMOUS;
  const name = mapper.getName(rfc2253(cert));
  return name === null ? null : { principalType: 'User', name };
}

/**
 * A subject in RFC 2253 order and form, as Java's X500Principal.getName() prints it. Node lists the
 * attributes most general first, one a line, already escaped as RFC 2253 asks.
 */
export function rfc2253(cert: X509Certificate): string {
  return cert.subject.split('\n').filter((line) => line !== '').reverse().join(',');
}
