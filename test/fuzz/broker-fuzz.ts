// Fuzzing a running broker over the wire: for every API and version it serves (asked through
// ApiVersions, as a client does), requests written from the specs with random and boundary values,
// hostile ones, and mutations of real clients' requests (captured frames: truncations, bit flips,
// length lies), sent on several connections at once while a bystander connection keeps asking for
// Metadata and measures how long its answers take.
//
// What must hold: a request that decodes gets an answer carrying its correlation id that decodes
// with the response codec (only an acks=0 Produce gets none); one that does not decode closes its
// own connection and nothing else; the bystander keeps being answered. Every input is made from the
// seed, so a failure is reported with the seed and the frame's bytes.
import { Reader, Writer } from '../../src/protocol/primitives';
import {
  ApiKey, getApiSpec, encodeRequestHeader, decodeRequestHeader, decodeResponseHeader, requestHeaderVersion, responseHeaderVersion,
} from '../../src/protocol/generated';
import type { ApiVersionsResponse } from '../../src/protocol/generated/ApiVersionsResponse';
import { loadSpecDir, SPEC_DIR, type RawSpec } from '../protocol/spec-util';
import { RawClient } from '../helpers/raw-client';
import { fixtureBatches, mutate } from './codec-fuzz';
import { Prng, SpecBytes } from './spec-bytes';

/** Topics and groups the fuzzer names often, so that requests reach past "unknown topic". */
export const FUZZ_TOPICS = ['fuzz-a', 'fuzz-b'];
export const NAMES = [...FUZZ_TOPICS, 'fuzz-group', 'fuzz-txn', 'fuzz-member'];

/** The broker config the fuzzer expects: groups form at once, partitions few. */
export const FUZZ_BROKER_CONFIG: Record<string, string> = {
  'group.initial.rebalance.delay.ms': '0',
  'num.partitions': '2',
};

/**
 * Values fixed by field name so that a request cannot legitimately park for minutes (a long poll,
 * a rebalance waiting for members) and the fuzzer can tell a hang from a wait. Partition counts are
 * either small or over the per-request cap (answered POLICY_VIOLATION at once): the broker under
 * fuzzing stays small, and the cap is exercised.
 */
export function overrides(): (field: string, rng: Prng) => number | undefined {
  return (field, rng) => {
    switch (field) {
      case 'maxWaitMs':
        return rng.int(0, 50);
      case 'rebalanceTimeoutMs':
        return rng.int(-1, 500);
      case 'sessionTimeoutMs':
        // valid (group.min.session.timeout.ms is 6000) but short, or refused at once
        return rng.chance(0.5) ? rng.int(6000, 6500) : rng.int(-1, 5999);
      case 'numPartitions':
      case 'count':
        return rng.chance(0.2) ? rng.int(10_001, 0x7fffffff) : rng.int(-2, 8);
      default:
        return undefined;
    }
  };
}

/** The request in a frame, or undefined where it does not decode. */
function decoded<T>(frame: Buffer): T | undefined {
  try {
    const r = new Reader(frame);
    const apiKey = frame.readInt16BE(0);
    const version = frame.readInt16BE(2);
    decodeRequestHeader(r, requestHeaderVersion(apiKey, version));
    return getApiSpec(apiKey)!.decodeRequest(r, version) as T;
  } catch {
    return undefined;
  }
}

/** Over this many partitions (and up to Kafka's cap of 10,000 a request) a creation is not sent. */
const PARTITION_LIMIT = 100;

/**
 * Why an input that may legitimately keep the broker busy for long is not sent, or null: so that a
 * request unanswered for ANSWER_TIMEOUT_MS is a hang, not a wait.
 *  - A JoinGroup whose session or rebalance timeout is long (a mutated or captured one: kafkajs asks
 *    for 60 s) makes every later join of its group wait that long, as Kafka's does.
 *  - A CreateTopics or CreatePartitions for hundreds to thousands of partitions (under the cap, so
 *    valid) creates that many logs, for tens of seconds during which topic operations queue behind
 *    it, as they do behind Kafka's controller; counts over the cap are sent (POLICY_VIOLATION at once).
 */
function waitsLong(frame: Buffer): string | null {
  const apiKey = frame.readInt16BE(0);
  if (apiKey === ApiKey.JoinGroup) {
    const req = decoded<{ sessionTimeoutMs: number; rebalanceTimeoutMs?: number }>(frame);
    return req && (req.sessionTimeoutMs > 7000 || (req.rebalanceTimeoutMs ?? 0) > 7000) ? 'JoinGroup waiting over 7 s' : null;
  }
  if (apiKey === ApiKey.CreateTopics || apiKey === ApiKey.CreatePartitions) {
    const req = decoded<{ topics: { numPartitions?: number; count?: number }[] }>(frame);
    const total = (req?.topics ?? []).reduce((sum, t) => sum + Math.max(0, t.numPartitions ?? t.count ?? 0), 0);
    return total > PARTITION_LIMIT && total <= 10_000 ? `creating ${PARTITION_LIMIT + 1}-10,000 partitions` : null;
  }
  return null;
}

export interface FuzzFailure {
  kind: string;
  api: string;
  version: number;
  problem: string;
  frame: string;   // hex of the request frame without its size prefix, the first 4,000 digits
}

export interface BrokerFuzzReport {
  seed: number;
  inputs: number;
  answered: number;
  /** Connections the broker closed on a request that did not decode (as it must). */
  closedMalformed: number;
  failures: FuzzFailure[];
  bystanderRequests: number;
  bystanderP50Ms: number;
  bystanderP99Ms: number;
  bystanderMaxMs: number;
  /** The bystander waited longer than its limit for an answer. */
  bystanderStalls: number;
  byApi: Record<string, number>;
  /** Inputs not sent, by reason (see waitsLong). */
  skipped: Record<string, number>;
}

export interface BrokerFuzzOptions {
  port: number;
  host?: string;
  seed: number;
  /** Stop after this many inputs or this long, whichever comes first. */
  maxInputs?: number;
  durationMs?: number;
  connections?: number;
  /** Captured client request frames (no size prefix) to mutate. */
  captured?: Buffer[];
  /** Only these APIs (names as in the specs, e.g. 'JoinGroup'); all served ones when absent. */
  apis?: string[];
  /** Called with a line of progress now and then (long runs). */
  progress?: (line: string) => void;
  /** Sees every input before it is sent (the long run keeps the last ones, to show after a crash). */
  onInput?: (kind: string, frame: Buffer) => void;
  /** Stops the run early (the broker died). */
  stopped?: () => boolean;
}

const ANSWER_TIMEOUT_MS = 10_000;
/**
 * JoinGroup and SyncGroup may wait, as Kafka's do, for the other members of the group (a rebalance
 * lasts up to the longest rebalance timeout, a follower's SyncGroup waits for the leader's), members
 * that other inputs made and abandoned; with the session and rebalance timeouts the fuzzer writes,
 * that is at most a few session timeouts.
 */
const GROUP_ANSWER_TIMEOUT_MS = 30_000;
const BYSTANDER_STALL_MS = 5_000;
const MAX_FAILURES = 200;

/** The next response frame on `c`, or why there is none. */
async function nextFrame(c: RawClient, timeoutMs: number): Promise<Buffer | 'closed' | 'timeout'> {
  try {
    return await c.receiveFrame(timeoutMs);
  } catch {
    return c.ended ? 'closed' : 'timeout';
  }
}

function sized(body: Buffer): Buffer {
  const size = Buffer.allocUnsafe(4);
  size.writeInt32BE(body.length);
  return Buffer.concat([size, body]);
}

export function requestFrame(apiKey: number, version: number, correlationId: number, clientId: string | null, body: Buffer): Buffer {
  const w = new Writer();
  encodeRequestHeader(w, { requestApiKey: apiKey, requestApiVersion: version, correlationId, clientId }, requestHeaderVersion(apiKey, version));
  w.raw(body);
  return w.finishOne();
}

export interface Served { apiKey: number; min: number; max: number }

/** What the broker must do with a frame: answer it (decodable), stay silent (acks=0), or close. */
export type Expectation = { answer: true; apiKey: number; version: number; correlationId: number } | { answer: false; silent: boolean };

export function expectationOf(frame: Buffer, served: Map<number, Served>): Expectation {
  if (frame.length < 8) return { answer: false, silent: false };
  const apiKey = frame.readInt16BE(0);
  const version = frame.readInt16BE(2);
  const api = served.get(apiKey);
  if (!api || version < api.min || version > api.max) {
    // An unknown ApiVersions version is answered in the v0 format (KIP-511); anything else closes.
    return apiKey === ApiKey.ApiVersions
      ? { answer: true, apiKey, version: 0, correlationId: frame.readInt32BE(4) }
      : { answer: false, silent: false };
  }
  try {
    const r = new Reader(frame);
    const header = decodeRequestHeader(r, requestHeaderVersion(apiKey, version));
    const body = getApiSpec(apiKey)!.decodeRequest(r, version) as { acks?: number };
    if (apiKey === ApiKey.Produce && body.acks === 0) return { answer: false, silent: true };
    return { answer: true, apiKey, version, correlationId: header.correlationId };
  } catch {
    return { answer: false, silent: false };
  }
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];
}

/** Asks the broker which APIs and versions it serves. */
export async function servedApis(port: number, host: string): Promise<Served[]> {
  const c = await RawClient.connect(port, host);
  try {
    c.sendBytes(sized(requestFrame(ApiKey.ApiVersions, 3, 1, 'fuzz', Buffer.from([1, 1, 0]))));
    const frame = await nextFrame(c, ANSWER_TIMEOUT_MS);
    if (!Buffer.isBuffer(frame)) throw new Error(`ApiVersions: ${frame}`);
    const r = new Reader(frame);
    decodeResponseHeader(r, 0);
    const res = getApiSpec(ApiKey.ApiVersions)!.decodeResponse(r, 3) as ApiVersionsResponse;
    return res.apiKeys.map((k) => ({ apiKey: k.apiKey, min: k.minVersion, max: k.maxVersion }));
  } finally {
    c.close();
  }
}

/** What became of one request: answered, closed on, and what was wrong (null: as it must be). */
export interface Outcome { answered: boolean; closed: boolean; problem: string | null }

/**
 * Sends one request frame on `conn` and checks what the broker does against `expect`: an answer
 * with the request's correlation id that decodes, silence for acks=0, a close for what does not
 * decode. `closed`: the connection cannot be used any more (closed by the broker, or by us after a
 * timeout or a garbled answer).
 */
export async function exchange(conn: RawClient, frame: Buffer, expect: Expectation): Promise<Outcome> {
  conn.sendBytes(sized(frame));
  if (!expect.answer && expect.silent) {
    // acks=0: no answer; an ApiVersions after it proves the connection still serves (or was
    // closed, as Kafka closes it when such a produce fails).
    conn.sendBytes(sized(requestFrame(ApiKey.ApiVersions, 0, 0x7fffffff, 'fuzz', Buffer.alloc(0))));
  }
  const waits = expect.answer && (expect.apiKey === ApiKey.JoinGroup || expect.apiKey === ApiKey.SyncGroup);
  const timeoutMs = waits ? GROUP_ANSWER_TIMEOUT_MS : ANSWER_TIMEOUT_MS;
  const answer = await nextFrame(conn, timeoutMs);
  if (answer === 'timeout') {
    conn.close();
    return { answered: false, closed: true, problem: `no answer and no close within ${timeoutMs} ms` };
  }
  if (answer === 'closed') {
    return { answered: false, closed: true, problem: expect.answer ? 'the broker closed the connection on a request that decodes' : null };
  }
  if (!expect.answer) return { answered: true, closed: false, problem: expect.silent ? null : 'answered a request that does not decode' };
  try {
    const r = new Reader(answer);
    const header = decodeResponseHeader(r, responseHeaderVersion(expect.apiKey, expect.version));
    if (header.correlationId !== expect.correlationId) throw new Error(`correlation id ${header.correlationId}, expected ${expect.correlationId}`);
    getApiSpec(expect.apiKey)!.decodeResponse(r, expect.version);
  } catch (e) {
    conn.close();
    return { answered: true, closed: true, problem: `answer does not decode: ${(e as Error).message}` };
  }
  return { answered: true, closed: false, problem: null };
}

/** Runs the fuzzer against the broker at `port` until maxInputs or durationMs; reports what it saw. */
export async function fuzzBroker(opts: BrokerFuzzOptions): Promise<BrokerFuzzReport> {
  const host = opts.host ?? '127.0.0.1';
  const servedAll = await servedApis(opts.port, host);
  const servedByKey = new Map(servedAll.map((s) => [s.apiKey, s]));
  const served = servedAll.filter((s) => !opts.apis || opts.apis.includes(getApiSpec(s.apiKey)!.name));
  if (served.length === 0) throw new Error(`none of ${opts.apis?.join(', ')} is served`);
  const requestSpecs = new Map<number, RawSpec>();
  for (const spec of loadSpecDir(SPEC_DIR).values()) if (spec.type === 'request' && spec.apiKey !== undefined) requestSpecs.set(spec.apiKey, spec);
  const batches = fixtureBatches();
  const override = overrides();
  const records = (rng: Prng): Buffer => {
    const r = rng.next();
    if (r < 0.5) return rng.pick(batches);
    if (r < 0.8) return mutate(rng.pick(batches), rng);
    return rng.bytes(rng.int(0, 100));
  };
  const captured = (opts.captured ?? []).filter((f) => f.length >= 2 && served.some((s) => s.apiKey === f.readInt16BE(0)));

  const report: BrokerFuzzReport = {
    seed: opts.seed, inputs: 0, answered: 0, closedMalformed: 0, failures: [],
    bystanderRequests: 0, bystanderP50Ms: 0, bystanderP99Ms: 0, bystanderMaxMs: 0, bystanderStalls: 0, byApi: {}, skipped: {},
  };
  const deadline = opts.durationMs !== undefined ? Date.now() + opts.durationMs : Infinity;
  const maxInputs = opts.maxInputs ?? Infinity;
  let done = false;
  const finished = (): boolean => done || report.inputs >= maxInputs || Date.now() >= deadline || (opts.stopped?.() ?? false);
  const fail = (kind: string, frame: Buffer, problem: string): void => {
    const apiKey = frame.length >= 2 ? frame.readInt16BE(0) : -1;
    const api = getApiSpec(apiKey)?.name ?? String(apiKey);
    if (report.failures.length < MAX_FAILURES) {
      report.failures.push({ kind, api, version: frame.length >= 4 ? frame.readInt16BE(2) : -1, problem, frame: frame.toString('hex', 0, 2000) });
    }
  };

  // The bystander: one Metadata request at a time, timed.
  const latencies: number[] = [];
  const bystander = (async () => {
    let c = await RawClient.connect(opts.port, host);
    let correlationId = 0;
    const body = new Writer();
    body.unsignedVarint(FUZZ_TOPICS.length + 1);
    for (const t of FUZZ_TOPICS) {
      body.raw(Buffer.alloc(16));
      body.compactString(t);
      body.unsignedVarint(0);
    }
    body.raw(Buffer.from([0, 0, 0])); // allowAutoTopicCreation, includeTopicAuthorizedOperations, tags
    const metadata = body.finishOne();
    while (!finished()) {
      const started = process.hrtime.bigint();
      c.sendBytes(sized(requestFrame(ApiKey.Metadata, 12, ++correlationId, 'bystander', metadata)));
      const answer = await nextFrame(c, BYSTANDER_STALL_MS);
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      if (!Buffer.isBuffer(answer)) {
        report.bystanderStalls++;
        fail('bystander', Buffer.alloc(0), `bystander's Metadata: ${answer} after ${ms.toFixed(0)} ms`);
        c.close();
        if (finished()) break;
        try {
          c = await RawClient.connect(opts.port, host);
        } catch (e) {
          fail('bystander', Buffer.alloc(0), `bystander cannot connect: ${(e as Error).message}`);
          done = true;
          break;
        }
        continue;
      }
      latencies.push(ms);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    c.close();
  })();

  const worker = async (index: number): Promise<void> => {
    const rng = new Prng((opts.seed + index * 0x9e3779b9) >>> 0);
    let conn: RawClient | null = null;
    let correlationId = 0;
    while (!finished()) {
      try {
        conn ??= await RawClient.connect(opts.port, host);
      } catch (e) {
        fail('connect', Buffer.alloc(0), `cannot connect: ${(e as Error).message}`);
        done = true;
        break;
      }
      correlationId = (correlationId + 1) & 0x7fffffff;
      const { kind, frame, lie } = makeInput(rng, correlationId);
      const skip = frame.length >= 8 ? waitsLong(frame) : null;
      if (skip !== null) {
        report.skipped[skip] = (report.skipped[skip] ?? 0) + 1;
        continue;
      }
      report.inputs++;
      opts.onInput?.(kind, frame);
      const expect = expectationOf(frame, servedByKey);
      const apiName = getApiSpec(frame.length >= 2 ? frame.readInt16BE(0) : -1)?.name ?? 'unknown';
      report.byApi[apiName] = (report.byApi[apiName] ?? 0) + 1;
      if (lie !== null) {
        // A frame whose size prefix lies: the broker must close (bad size) or keep waiting for the
        // bytes; this connection is unusable either way.
        conn.sendBytes(Buffer.concat([lie, frame]));
        const answer = await nextFrame(conn, 50);
        if (Buffer.isBuffer(answer) && lie.readInt32BE(0) > 0 && lie.readInt32BE(0) !== frame.length) {
          fail(kind, frame, `answered a frame whose size claims ${lie.readInt32BE(0)} bytes of ${frame.length}`);
        }
        conn.close();
        conn = null;
        continue;
      }
      const outcome = await exchange(conn, frame, expect);
      if (outcome.answered) report.answered++;
      else if (outcome.closed && outcome.problem === null) report.closedMalformed++;
      if (outcome.problem !== null) fail(kind, frame, outcome.problem);
      if (outcome.closed) conn = null;
    }
    conn?.close();
  };

  function makeInput(rng: Prng, correlationId: number): { kind: string; frame: Buffer; lie: Buffer | null } {
    const api = rng.pick(served);
    const version = rng.int(api.min, api.max);
    const spec = requestSpecs.get(api.apiKey)!;
    const clientId = rng.pick<string | null>(['fuzz', null, '', 'x'.repeat(300)]);
    const r = rng.next();
    let kind: string;
    let frame: Buffer;
    if (r < 0.6 || (r < 0.75 && captured.length === 0)) {
      kind = 'spec';
      frame = requestFrame(api.apiKey, version, correlationId, clientId,
        new SpecBytes(spec, version, rng, { hostile: false, unknownTags: true, names: NAMES, records, override }).message());
    } else if (r < 0.75) {
      kind = 'captured';
      frame = mutate(rng.pick(captured), rng);
      if (frame.length >= 8) frame.writeInt32BE(correlationId, 4);
    } else if (r < 0.9) {
      kind = 'hostile';
      frame = requestFrame(api.apiKey, version, correlationId, clientId,
        new SpecBytes(spec, version, rng, { hostile: true, unknownTags: true, names: NAMES, records, override }).message());
    } else {
      kind = 'mutated';
      frame = mutate(requestFrame(api.apiKey, version, correlationId, clientId,
        new SpecBytes(spec, version, rng, { hostile: false, unknownTags: true, names: NAMES, records, override }).message()), rng);
    }
    let lie: Buffer | null = null;
    if (rng.chance(0.02)) {
      lie = Buffer.allocUnsafe(4);
      lie.writeInt32BE(rng.pick([0, -1, -0x80000000, frame.length + 1, frame.length + 1000, 0x7fffffff]));
    }
    return { kind, frame, lie };
  }

  const progress = opts.progress ? setInterval(() => {
    opts.progress!(`${report.inputs} inputs, ${report.failures.length} failures, bystander ${latencies.length} answers`);
  }, 10_000) : null;
  try {
    await Promise.all(Array.from({ length: opts.connections ?? 4 }, (_, i) => worker(i)));
  } finally {
    done = true;
    if (progress) clearInterval(progress);
    await bystander;
  }
  const sorted = latencies.slice().sort((a, b) => a - b);
  report.bystanderRequests = sorted.length;
  report.bystanderP50Ms = percentile(sorted, 0.5);
  report.bystanderP99Ms = percentile(sorted, 0.99);
  report.bystanderMaxMs = sorted.length ? sorted[sorted.length - 1] : 0;
  return report;
}
