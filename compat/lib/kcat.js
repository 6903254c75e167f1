'use strict';
// kcat (librdkafka's CLI) as a producer and as a group-less consumer, for the kcat client program and
// for reading back what the kafkajs producer wrote (kafkajs's consumer needs a consumer group).
const { execFileSync, spawn } = require('child_process');

const KEY_DELIM = 0x1f; // -K '\x1f'  (value(i) has no 0x1e or 0x1f byte)
const MSG_DELIM = 0x1e; // -D '\x1e'

function kcat(args, input, timeout = 30000) {
  try {
    return execFileSync('kcat', args, { input, timeout, maxBuffer: 256 << 20, stdio: ['pipe', 'pipe', 'pipe'] });
  } catch (e) {
    const err = (e.stderr || '').toString().trim().split('\n').slice(-8).join('\n');
    throw new Error(`kcat ${args.filter((a) => a.length < 200).join(' ')} exited ${e.status}${e.signal ? ` (${e.signal})` : ''}: ${err || e.message}`, { cause: e });
  }
}

const xargs = (config) => Object.entries(config).flatMap(([k, v]) => ['-X', `${k}=${v}`]);

/**
 * kcat -P's arguments and input for [{ key, value }] (Buffers; a null value is sent as NULL, a tombstone: -Z turns
 * the empty value it is written as into NULL); headers [[name, value]] go on every record.
 */
function produceCommand(bootstrap, topic, records, { headers = [], config = {} }) {
  const parts = [];
  for (const r of records) parts.push(r.key, Buffer.from([KEY_DELIM]), r.value || Buffer.alloc(0), Buffer.from([MSG_DELIM]));
  const args = ['-P', '-b', bootstrap, '-t', topic, '-K', '\\x1f', '-D', '\\x1e', '-m', '15', ...xargs(config)];
  if (records.some((r) => r.value === null)) args.push('-Z');
  for (const [k, v] of headers) args.push('-H', `${k}=${v}`);
  return { args, input: Buffer.concat(parts) };
}

/** Produces [{ key, value }] with kcat -P (see produceCommand). */
function produce(bootstrap, topic, records, opts = {}) {
  const { args, input } = produceCommand(bootstrap, topic, records, opts);
  kcat(args, input);
}

/** Produces one record per file (whole file = value) with a fixed key: how kcat sends binary values. */
function produceFile(bootstrap, topic, key, file, config = {}) {
  kcat(['-P', '-b', bootstrap, '-t', topic, '-k', key, '-m', '15', ...xargs(config), file]);
}

// One record: "partition offset timestamp keylen valuelen headers\n" key value "\n".
const FORMAT = '%p %o %T %K %S %h\\n%k%s\\n';

/** Consumes every partition of a topic from the beginning to its end, without a group (kcat -C -e). */
function consumeAll(bootstrap, topic, config = {}) {
  return parse(kcat(['-C', '-b', bootstrap, '-t', topic, '-o', 'beginning', '-e', '-q', '-m', '15', '-f', FORMAT, ...xargs(config)]));
}

/** The first `count` records of a partition from `offset` on, without a group (kcat -C -o OFFSET -c COUNT). */
function consumeFrom(bootstrap, topic, partition, offset, count, config = {}) {
  return parse(kcat(['-C', '-b', bootstrap, '-t', topic, '-p', String(partition), '-o', String(offset), '-c', String(count), '-q', '-m', '15', '-f', FORMAT, ...xargs(config)]));
}

/** A group member's values (kcat -G GROUP ... -e) until the end of its partitions or `timeout` ms (then it fails). */
function groupConsume(bootstrap, group, topic, config = {}, timeout = 30000) {
  return kcat(['-G', group, '-b', bootstrap, '-e', '-q', '-f', '%s\\n', ...xargs(config), topic], undefined, timeout).toString().split('\n').filter(Boolean);
}

/** The records in kcat's FORMAT output. */
function parse(out) {
  const records = [];
  let pos = 0;
  while (pos < out.length) {
    const nl = out.indexOf(0x0a, pos);
    const fields = out.toString('utf8', pos, nl).split(' ');
    const [partition, offset, timestamp, klen, vlen] = fields.slice(0, 5).map(Number);
    const h = fields.slice(5).join(' ');
    pos = nl + 1;
    const key = klen < 0 ? null : out.subarray(pos, pos + klen);
    pos += Math.max(klen, 0);
    const value = vlen < 0 ? null : out.subarray(pos, pos + vlen);
    pos += Math.max(vlen, 0) + 1;
    // %h prints "name=value,name=value" (kcat does not escape; our header names and values have no ',' or '=').
    const headers = h ? h.split(',').map((kv) => [kv.slice(0, kv.indexOf('=')), Buffer.from(kv.slice(kv.indexOf('=') + 1), 'utf8')]) : [];
    records.push({ partition, offset, timestamp, key, value, headers });
  }
  return records;
}

/** kcat -Q: the offset of the first record with timestamp >= ts in topic/partition (-1 if none). */
function offsetForTime(bootstrap, topic, partition, ts) {
  const out = kcat(['-Q', '-b', bootstrap, '-t', `${topic}:${partition}:${ts}`, '-m', '15']).toString();
  const m = / offset (-?\d+)/.exec(out);
  if (!m) throw new Error(`kcat -Q printed no offset: ${out.trim()}`);
  return Number(m[1]);
}

/** produce(), asynchronously (the consumer-group scenarios keep reading their members' output meanwhile). */
function produceAsync(bootstrap, topic, records, opts = {}) {
  const { args, input } = produceCommand(bootstrap, topic, records, opts);
  return new Promise((resolve, reject) => {
    const child = spawn('kcat', args, { stdio: ['pipe', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    child.on('error', reject);
    child.on('exit', (code, signal) => (code === 0 ? resolve() : reject(new Error(`kcat ${args.join(' ')} exited ${code ?? signal}: ${err.trim().slice(-1000)}`))));
    child.stdin.end(input);
  });
}

/**
 * Cluster metadata as kcat -L -J prints it: { brokers: [{ id, name: "host:port" }], topics: [{ topic, partitions:
 * [{ partition, leader, replicas: [{ id }], isrs: [{ id }] }] }] } (a partition without a leader too, leader -1).
 */
function metadata(bootstrap, topic) {
  const args = ['-b', bootstrap, '-L', '-J', '-m', '10', ...(topic ? ['-t', topic] : [])];
  let out;
  try {
    out = execFileSync('kcat', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (e) {
    throw new Error(`kcat ${args.join(' ')} exited ${e.status}: ${e.stderr || e.message}`, { cause: e });
  }
  return JSON.parse(out);
}

module.exports = { metadata, produce, produceAsync, produceFile, consumeAll, groupConsume, consumeFrom, offsetForTime, xargs };
