/**
 * `--command-config FILE`: a Kafka client properties file, as Kafka's own tools take it, turned into
 * the connection's TLS and SASL settings. What Node cannot read (JKS and PKCS12 stores, GSSAPI) is
 * refused with the property to change, rather than connecting without it.
 */
import * as fs from 'node:fs';
import type { ConnectionOptions as TlsOptions } from 'node:tls';
import { AdminError } from '../admin/errors';
import type { ConnectionOptions, SaslMechanism } from '../admin/connection';
import { readPropertiesFile } from '../config/properties';

const SASL_MECHANISMS: readonly SaslMechanism[] = ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512'];

export function securityOfClientProperties(file: string): Pick<ConnectionOptions, 'tls' | 'sasl'> {
  let props: Map<string, string>;
  try {
    props = readPropertiesFile(file);
  } catch (e) {
    throw new AdminError(`--command-config ${file}: ${(e as Error).message}`);
  }
  const bad = (name: string, why: string) => new AdminError(`--command-config ${file}: ${name}: ${why}`);
  const protocol = (props.get('security.protocol') ?? 'PLAINTEXT').toUpperCase();
  if (!['PLAINTEXT', 'SSL', 'SASL_PLAINTEXT', 'SASL_SSL'].includes(protocol)) throw bad('security.protocol', `'${protocol}' is not PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL`);
  const out: Pick<ConnectionOptions, 'tls' | 'sasl'> = {};

  if (protocol.startsWith('SASL_')) {
    // Kafka's default mechanism is GSSAPI (Kerberos), which this client does not have.
    const mechanism = (props.get('sasl.mechanism') ?? 'GSSAPI').toUpperCase() as SaslMechanism;
    if (!SASL_MECHANISMS.includes(mechanism)) throw bad('sasl.mechanism', `'${mechanism}' is not supported here (${SASL_MECHANISMS.join(', ')})`);
    const jaas = props.get('sasl.jaas.config') ?? '';
    const option = (name: string) => new RegExp(`\\b${name}\\s*=\\s*"((?:[^"\\\\]|\\\\.)*)"`).exec(jaas)?.[1].replace(/\\(.)/g, '$1');
    const username = option('username');
    const password = option('password');
    if (username === undefined || password === undefined) throw bad('sasl.jaas.config', 'needs username="..." and password="..."');
    out.sasl = { mechanism, username, password };
  }

  if (protocol === 'SSL' || protocol === 'SASL_SSL') {
    const tls: TlsOptions = {};
    const pem = (typeProperty: string, type: string | undefined) => {
      if (type !== undefined && type.toUpperCase() !== 'PEM') throw bad(typeProperty, `'${type}' stores cannot be read here: use PEM (${typeProperty}=PEM)`);
    };
    const readFile = (name: string, path: string) => {
      try {
        return fs.readFileSync(path, 'utf8');
      } catch (e) {
        throw bad(name, (e as Error).message);
      }
    };
    const trustLocation = props.get('ssl.truststore.location');
    const trustInline = props.get('ssl.truststore.certificates');
    if (trustLocation !== undefined || trustInline !== undefined) {
      pem('ssl.truststore.type', props.get('ssl.truststore.type') ?? (trustInline !== undefined ? 'PEM' : 'JKS'));
      tls.ca = trustInline ?? readFile('ssl.truststore.location', trustLocation!);
    }
    const keyLocation = props.get('ssl.keystore.location');
    const keyInline = props.get('ssl.keystore.key');
    if (keyLocation !== undefined || keyInline !== undefined) {
      pem('ssl.keystore.type', props.get('ssl.keystore.type') ?? (keyInline !== undefined ? 'PEM' : 'JKS'));
      // A PEM keystore file holds the key and its certificate chain; Node reads each from it.
      const keystore = keyInline ?? readFile('ssl.keystore.location', keyLocation!);
      tls.key = keystore;
      tls.cert = props.get('ssl.keystore.certificate.chain') ?? keystore;
      const passphrase = props.get('ssl.key.password');
      if (passphrase) tls.passphrase = passphrase;
    }
    // Kafka checks the broker's host name unless this is set empty.
    if (props.get('ssl.endpoint.identification.algorithm') === '') tls.checkServerIdentity = () => undefined;
    out.tls = tls;
  }
  return out;
}
