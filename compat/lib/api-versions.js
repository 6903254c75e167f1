#!/usr/bin/env node
'use strict';
// What a broker answers to ApiVersions v4: its APIs with their version ranges, its supported and finalized
// features. Written by hand on a socket (no client library, no Fjord code), so that it reads Kafka and Fjord
// alike. compat/run.js reads the finalized transaction.version with it (lib/log-dirs.js reuses its socket and
// reader); from the command line it prints the answer as JSON, or writes it to a file:
//
//   node compat/lib/api-versions.js HOST:PORT                 print it
//   node compat/lib/api-versions.js HOST:PORT --write FILE    write it to FILE (the fixture of
//                                                             test/protocol/kafka-api-versions.test.ts:
//                                                             test/protocol/kafka-4.4.0-api-versions.json,
//                                                             captured from compat/lib/apache-kafka.sh)
const fs = require('fs');
const net = require('net');

const API_VERSIONS = 18;
// v4: the body of v3 (the first flexible version); a v4 answer lists every supported feature, v3 only
// metadata.version (KIP-1022). Kafka 4.4 serves 0-5.
const VERSION = 4;

/** The request frame: header v2 (key, version, correlation id, client id, no tags), then the v3/v4 body. */
function requestFrame(correlationId) {
  const compactString = (s) => Buffer.concat([Buffer.from([Buffer.byteLength(s) + 1]), Buffer.from(s)]);
  const clientId = Buffer.from('fjord-compat');
  const header = Buffer.alloc(10);
  header.writeInt16BE(API_VERSIONS, 0);
  header.writeInt16BE(VERSION, 2);
  header.writeInt32BE(correlationId, 4);
  header.writeInt16BE(clientId.length, 8);
  const body = Buffer.concat([header, clientId, Buffer.from([0]), compactString('fjord-compat'), compactString('1.0'), Buffer.from([0])]);
  const size = Buffer.alloc(4);
  size.writeInt32BE(body.length, 0);
  return Buffer.concat([size, body]);
}

/** A reader of Kafka's primitive types over one buffer. */
class Reader {
  constructor(buf) {
    this.buf = buf;
    this.at = 0;
  }
  int16() {
    return (this.at += 2), this.buf.readInt16BE(this.at - 2);
  }
  int32() {
    return (this.at += 4), this.buf.readInt32BE(this.at - 4);
  }
  int64() {
    return (this.at += 8), this.buf.readBigInt64BE(this.at - 8);
  }
  uvarint() {
    let value = 0;
    for (let shift = 0; ; shift += 7) {
      const b = this.buf[this.at++];
      value += (b & 0x7f) * 2 ** shift;
      if (!(b & 0x80)) return value;
    }
  }
  string() {
    const n = this.int16();
    return (this.at += n), this.buf.toString('utf8', this.at - n, this.at);
  }
  /** A (non-compact) array: int32 count, each item read by item(). */
  array(item) {
    return Array.from({ length: this.int32() }, () => item());
  }
  bool() {
    return this.buf[this.at++] !== 0;
  }
  compactString() {
    const n = this.uvarint() - 1;
    return (this.at += n), this.buf.toString('utf8', this.at - n, this.at);
  }
  /** A compact array of structs, each read by item() and followed by its (skipped) tagged fields. */
  compactArray(item) {
    const n = this.uvarint() - 1;
    const out = [];
    for (let i = 0; i < n; i++) {
      out.push(item());
      this.skipTags();
    }
    return out;
  }
  /** Tagged fields: calls onTag(tag, reader of its bytes) for each, or skips them. */
  skipTags(onTag = () => {}) {
    const count = this.uvarint();
    for (let i = 0; i < count; i++) {
      const tag = this.uvarint();
      const size = this.uvarint();
      onTag(tag, new Reader(this.buf.subarray(this.at, this.at + size)));
      this.at += size;
    }
  }
}

/** The ApiVersions v3/v4 response body (the response header is v0 for ApiVersions: the correlation id only). */
function parseResponse(body) {
  const r = new Reader(body);
  r.int32(); // correlation id
  const errorCode = r.int16();
  const apiKeys = r.compactArray(() => ({ apiKey: r.int16(), minVersion: r.int16(), maxVersion: r.int16() }));
  r.int32(); // throttle time
  const answer = { errorCode, apiKeys, supportedFeatures: [], finalizedFeaturesEpoch: -1, finalizedFeatures: [] };
  r.skipTags((tag, t) => {
    if (tag === 0) answer.supportedFeatures = t.compactArray(() => ({ name: t.compactString(), minVersion: t.int16(), maxVersion: t.int16() }));
    else if (tag === 1) answer.finalizedFeaturesEpoch = Number(t.int64());
    else if (tag === 2) answer.finalizedFeatures = t.compactArray(() => ({ name: t.compactString(), maxVersionLevel: t.int16(), minVersionLevel: t.int16() }));
  });
  answer.apiKeys.sort((a, b) => a.apiKey - b.apiKey);
  for (const list of [answer.supportedFeatures, answer.finalizedFeatures]) list.sort((a, b) => a.name.localeCompare(b.name));
  return answer;
}

/** Sends one request frame to HOST:PORT (the first of a comma-separated list); resolves the response (after its size). */
function roundTrip(bootstrap, frame, what, timeoutMs = 10000) {
  const [host, port] = bootstrap.split(',')[0].split(':');
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), host);
    const timer = setTimeout(() => socket.destroy(new Error(`no ${what} answer from ${bootstrap} in ${timeoutMs} ms`)), timeoutMs);
    let buf = Buffer.alloc(0);
    socket.on('connect', () => socket.write(frame));
    socket.on('data', (d) => {
      buf = Buffer.concat([buf, d]);
      if (buf.length < 4 || buf.length < 4 + buf.readInt32BE(0)) return;
      clearTimeout(timer);
      socket.end();
      resolve(buf.subarray(4, 4 + buf.readInt32BE(0)));
    });
    socket.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
  });
}

/** Asks HOST:PORT (the first of a comma-separated list); resolves the parsed answer. */
async function apiVersions(bootstrap, timeoutMs = 10000) {
  const body = await roundTrip(bootstrap, requestFrame(1), 'ApiVersions', timeoutMs);
  try {
    return parseResponse(body);
  } catch (e) {
    throw new Error(`cannot parse ApiVersions v${VERSION} from ${bootstrap}: ${e.message}`, { cause: e });
  }
}

/** The finalized level of a feature (0 when the broker does not list it, as Kafka reads a missing one). */
async function finalizedLevel(bootstrap, feature) {
  const answer = await apiVersions(bootstrap);
  const f = answer.finalizedFeatures.find((x) => x.name === feature);
  return f ? f.maxVersionLevel : 0;
}

module.exports = { apiVersions, finalizedLevel, roundTrip, Reader };

if (require.main === module) {
  const [bootstrap, flag, file] = process.argv.slice(2);
  if (!bootstrap || (flag && (flag !== '--write' || !file))) {
    console.error('usage: node compat/lib/api-versions.js HOST:PORT [--write FILE]');
    process.exit(2);
  }
  apiVersions(bootstrap).then(
    (answer) => {
      const text = `${JSON.stringify(answer, null, 1)}\n`;
      if (file) fs.writeFileSync(file, text);
      else process.stdout.write(text);
    },
    (e) => {
      console.error(`api-versions: ${e.message}`);
      process.exit(1);
    },
  );
}
