// Certificates for TLS tests, made with the openssl command in a temporary directory: a CA, server
// certificates for 127.0.0.1 and localhost, and client certificates with any subject, each signed by
// the CA (or another CA, for a certificate that must not verify). EC P-256 keys: quick to make.
//
//   const certs = makeCertificates();            // certs.ca, certs.server
//   const alice = certs.client('/CN=alice/OU=eng/O=acme');
//   broker config: { ...certs.brokerSsl } (ssl.keystore.location = certs.server.keystore, ssl.truststore.location = certs.ca.certPath)
//   kafkajs:       ssl: { ca: certs.ca.cert, cert: alice.cert, key: alice.key }
//   certs.remove() when done.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

export interface KeyPair {
  /** PEM texts. */
  readonly cert: string;
  readonly key: string;
  readonly certPath: string;
  readonly keyPath: string;
  /** One PEM file with the key and then the certificate (Kafka's PEM ssl.keystore.location). */
  readonly keystore: string;
}

export interface Certificates {
  readonly dir: string;
  readonly ca: KeyPair;
  /** For 127.0.0.1, ::1 and localhost, signed by `ca`. */
  readonly server: KeyPair;
  /** A broker's PEM keystore (`server`) and truststore (`ca`) properties. */
  readonly brokerSsl: Record<string, string>;
  /** A client (or any) certificate with this subject ("/CN=alice/O=acme"), signed by `ca` or `signer`. */
  client(subject: string, opts?: { signer?: KeyPair; keyPassword?: string }): KeyPair;
  /** Another CA, e.g. for a certificate the broker must not trust. */
  otherCa(): KeyPair;
  remove(): void;
}

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

export function makeCertificates(): Certificates {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fjord-certs-'));
  let serial = 0;
  const pair = (name: string): KeyPair => {
    const certPath = path.join(dir, `${name}.crt`);
    const keyPath = path.join(dir, `${name}.key`);
    const cert = fs.readFileSync(certPath, 'utf8');
    const key = fs.readFileSync(keyPath, 'utf8');
    const keystore = path.join(dir, `${name}.keystore.pem`);
    fs.writeFileSync(keystore, key + cert);
    return { cert, key, certPath, keyPath, keystore };
  };
  const newCa = (name: string): KeyPair => {
    openssl(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2',
      '-subj', `/CN=${name}`, '-keyout', `${name}.key`, '-out', `${name}.crt`], dir);
    return pair(name);
  };
  const signed = (name: string, subject: string, signer: KeyPair, extensions: string, keyPassword?: string): KeyPair => {
    openssl(['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-subj', subject,
      '-keyout', `${name}.key`, '-out', `${name}.csr`], dir);
    fs.writeFileSync(path.join(dir, `${name}.ext`), extensions);
    openssl(['x509', '-req', '-in', `${name}.csr`, '-CA', signer.certPath, '-CAkey', signer.keyPath, '-set_serial', String(++serial),
      '-days', '2', '-extfile', `${name}.ext`, '-out', `${name}.crt`], dir);
    if (keyPassword !== undefined) {
      openssl(['pkcs8', '-topk8', '-in', `${name}.key`, '-out', `${name}.enc.key`, '-passout', `pass:${keyPassword}`, '-v2', 'aes-256-cbc'], dir);
      fs.renameSync(path.join(dir, `${name}.enc.key`), path.join(dir, `${name}.key`));
    }
    return pair(name);
  };
  const ca = newCa('ca');
  const server = signed('server', '/CN=localhost', ca, 'subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost\n');
  let clients = 0;
  let cas = 0;
  return {
    dir, ca, server,
    brokerSsl: {
      'ssl.keystore.type': 'PEM', 'ssl.keystore.location': server.keystore,
      'ssl.truststore.type': 'PEM', 'ssl.truststore.location': ca.certPath,
    },
    client: (subject, opts = {}) => signed(`client-${++clients}`, subject, opts.signer ?? ca, 'extendedKeyUsage=clientAuth\n', opts.keyPassword),
    otherCa: () => newCa(`other-ca-${++cas}`),
    remove: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}
