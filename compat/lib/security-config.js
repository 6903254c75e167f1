'use strict';
// Client side of the security rows for the Node programs (kafkajs, kcat): the transports, each client's settings
// for them from the FJORD_SEC_* variables (../security/rows.js sets them), and how an error names its Kafka code.
const fs = require('fs');

/** secure-produce-consume's transports: SSL, mutual TLS, then each SASL mechanism over SASL_SSL. */
const TRANSPORTS = ['SSL', 'MTLS', 'PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512', 'OAUTHBEARER'];
const password = (user) => `${user}-secret`; // every user's password (lib/secure-broker.js)

function env(name) {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set (the security rows run under compat/run.js)`);
  return v;
}

/** An unsecured JWS (alg none), as Kafka's OAuthBearerUnsecuredLoginCallbackHandler makes: sub, iat, exp. */
function unsecuredJws(sub) {
  const b64 = (o) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  return `${b64({ alg: 'none' })}.${b64({ sub, iat: now, exp: now + 3600 })}.`;
}

/** The broker endpoint of a transport; SASL mechanisms over SASL_SSL, or SASL_PLAINTEXT if !tls. */
function endpoint(transport, tls = true) {
  if (transport === 'SSL') return env('FJORD_SEC_SSL');
  if (transport === 'MTLS') return env('FJORD_SEC_MTLS');
  return env(tls ? 'FJORD_SEC_SASL_SSL' : 'FJORD_SEC_SASL_PLAINTEXT');
}

/** kafkajs's { brokers, ssl, sasl } for a transport as `user`. */
function kafkajsConfig(transport, user, tls = true) {
  const config = { brokers: [endpoint(transport, tls)] };
  if (tls) config.ssl = { ca: [fs.readFileSync(env('FJORD_SEC_CA'))] };
  if (transport === 'MTLS') Object.assign(config.ssl, { cert: fs.readFileSync(env('FJORD_SEC_CLIENT_CERT')), key: fs.readFileSync(env('FJORD_SEC_CLIENT_KEY')) });
  else if (transport === 'OAUTHBEARER') config.sasl = { mechanism: 'oauthbearer', oauthBearerProvider: async () => ({ value: unsecuredJws(user) }) };
  else if (transport !== 'SSL') config.sasl = { mechanism: transport.toLowerCase(), username: user, password: password(user) };
  return config;
}

/** librdkafka's settings (kcat -X) for a transport as `user` (the bootstrap is endpoint(transport, tls)). */
function librdkafkaConfig(transport, user, tls = true) {
  const config = {};
  if (tls) config['ssl.ca.location'] = env('FJORD_SEC_CA');
  if (transport === 'SSL' || transport === 'MTLS') config['security.protocol'] = 'ssl';
  else config['security.protocol'] = tls ? 'sasl_ssl' : 'sasl_plaintext';
  if (transport === 'MTLS') Object.assign(config, { 'ssl.certificate.location': env('FJORD_SEC_CLIENT_CERT'), 'ssl.key.location': env('FJORD_SEC_CLIENT_KEY') });
  else if (transport === 'OAUTHBEARER') Object.assign(config, { 'sasl.mechanisms': 'OAUTHBEARER', 'enable.sasl.oauthbearer.unsecure.jwt': 'true', 'sasl.oauthbearer.config': `principal=${user}` });
  else if (transport !== 'SSL') Object.assign(config, { 'sasl.mechanisms': transport, 'sasl.username': user, 'sasl.password': password(user) });
  return config;
}

/** The Kafka error type (kafkajs's `type`, e.g. TOPIC_AUTHORIZATION_FAILED) of an error or of one of its causes. */
function errorType(e) {
  for (let x = e, depth = 0; x && depth < 6; x = x.cause || x.originalError, depth++) if (x.type) return x.type;
  return null;
}

module.exports = { TRANSPORTS, endpoint, unsecuredJws, kafkajsConfig, librdkafkaConfig, errorType, env };
