/*
 * index.ts: ApiKey (name -> key), ApiRequestMap/ApiResponseMap (key -> body
 * type), apiSpecs (key -> { apiKey, name, minVersion, maxVersion, flexibleMin,
 * latestVersionUnstable, encode/decode Request/Response }), apiSpecList,
 * getApiSpec(key), requestHeaderVersion/responseHeaderVersion,
 * readRequestHeader, encodeResponseFrame/encodeRequestFrame, the header
 * codecs, and every message type (type-only re-exports). Data specs (type
 * "data": records Kafka writes to its logs, e.g. __consumer_offsets keys and
 * values) get no apiSpecs entry. Message modules are loaded lazily on first
 * use of their apiSpecs entry (fast start-up).
 */
'use strict';

const { isEmpty } = require('./versions');
const { camel } = require('./spec-model');

/**
 * Pairs every request spec with its response spec by name (<Api>Request,
 * <Api>Response) and checks that they agree; the header specs must exist.
 */
function pairApis(msgs) {
  const byName = new Map(msgs.map((m) => [m.name, m]));
  const apis = new Map();
  for (const m of msgs) {
    if (m.kind !== 'request') continue;
    if (!m.name.endsWith('Request')) throw new Error(`${m.name}: request name must end in Request`);
    const base = m.name.slice(0, -'Request'.length);
    const resp = byName.get(`${base}Response`);
    if (!resp) throw new Error(`${m.name}: no matching response spec`);
    if (resp.apiKey !== m.apiKey) throw new Error(`${m.name}: response apiKey mismatch`);
    if (resp.valid.lo !== m.valid.lo || resp.valid.hi !== m.valid.hi) throw new Error(`${m.name}: response validVersions mismatch`);
    if (apis.has(m.apiKey)) throw new Error(`duplicate apiKey ${m.apiKey}`);
    apis.set(m.apiKey, { key: m.apiKey, base, req: m, resp });
  }
  for (const m of msgs) {
    if (m.kind === 'response' && !apis.has(m.apiKey)) throw new Error(`${m.name}: no matching request spec`);
  }
  for (const h of ['RequestHeader', 'ResponseHeader']) if (!byName.has(h)) throw new Error(`missing ${h} spec`);
  return { byName, apis };
}

/** First flexible version as a TypeScript literal. */
function flexibleMin(m) {
  return isEmpty(m.flexible) ? 'Infinity' : String(m.flexible.lo);
}

/** The text of index.ts for the models of all specs (the writer adds the banner). */
function genIndexFile(msgs) {
  const { byName, apis } = pairApis(msgs);
  const list = [...apis.values()].sort((a, b) => a.key - b.key);

  const out = [];
  out.push(
    '/*',
    ' * Message codecs are loaded lazily: this index only loads the two header',
    ' * modules eagerly, and each API\'s request/response module on the first use',
    ' * of its apiSpecs entry (keeps process start-up fast). All message types are',
    ' * re-exported as types; import codec functions from the per-message module',
    " * (e.g. './generated/MetadataResponse') or go through apiSpecs/getApiSpec.",
    ' */',
    '',
  );
  out.push(`import { Reader, Writer } from '../primitives';`);
  const headers = ['RequestHeader', 'ResponseHeader'];
  // API messages are loaded through apiSpecs; data messages (records, not requests) only have their types here.
  const names = msgs.filter((m) => m.kind === 'request' || m.kind === 'response').map((m) => m.name).sort();
  const dataNames = msgs.filter((m) => m.kind === 'data').map((m) => m.name).sort();
  out.push(
    "import { encodeRequestHeader, decodeRequestHeader, type RequestHeader } from './RequestHeader';",
    "import { encodeResponseHeader } from './ResponseHeader';",
  );
  for (const n of names) out.push(`import type { ${n} } from './${n}';`);
  out.push('');
  for (const n of headers) out.push(`export * from './${n}';`);
  for (const n of [...names, ...dataNames].sort()) out.push(`export type * from './${n}';`);
  out.push('');
  for (const n of names) {
    out.push(
      `let ${camel(n)}Module: typeof import('./${n}') | undefined;`,
      `function load${n}(): typeof import('./${n}') {`,
      `  return (${camel(n)}Module ??= require('./${n}') as typeof import('./${n}'));`,
      '}',
    );
  }
  out.push('');
  out.push('/** Kafka API keys by name. */', 'export const ApiKey = {');
  for (const a of list) out.push(`  ${a.base}: ${a.key},`);
  out.push('} as const;', 'export type ApiKey = (typeof ApiKey)[keyof typeof ApiKey];', '');
  out.push('export type ApiName = keyof typeof ApiKey;', '');
  out.push(
    '/** Codec and version information of one API. */',
    'export interface ApiSpec<Req, Res> {',
    '  readonly apiKey: number;',
    "  /** e.g. 'Metadata' */",
    '  readonly name: string;',
    '  readonly minVersion: number;',
    '  readonly maxVersion: number;',
    '  /** first flexible version, Infinity if none */',
    '  readonly flexibleMin: number;',
    '  /** the spec marks the latest version as unstable */',
    '  readonly latestVersionUnstable: boolean;',
    '  encodeRequest(w: Writer, m: Req, version: number): void;',
    '  decodeRequest(r: Reader, version: number): Req;',
    '  encodeResponse(w: Writer, m: Res, version: number): void;',
    '  decodeResponse(r: Reader, version: number): Res;',
    '}',
    '',
    '/** Untyped view of any ApiSpec, for dispatch tables. */',
    'export type AnyApiSpec = ApiSpec<unknown, unknown>;',
    '',
  );
  out.push('/** Request body type per API key. */', 'export interface ApiRequestMap {');
  for (const a of list) out.push(`  ${a.key}: ${a.req.name};`);
  out.push('}', '', '/** Response body type per API key. */', 'export interface ApiResponseMap {');
  for (const a of list) out.push(`  ${a.key}: ${a.resp.name};`);
  out.push('}', '');
  out.push('export type ApiSpecs = { readonly [K in ApiKey]: ApiSpec<ApiRequestMap[K], ApiResponseMap[K]> };', '');
  out.push('/** All APIs, keyed by API key. */', 'export const apiSpecs: ApiSpecs = {');
  for (const a of list) {
    out.push(
      `  ${a.key}: {`,
      `    apiKey: ${a.key},`,
      `    name: '${a.base}',`,
      `    minVersion: ${a.req.valid.lo},`,
      `    maxVersion: ${a.req.valid.hi},`,
      `    flexibleMin: ${flexibleMin(a.req)},`,
      `    latestVersionUnstable: ${a.req.unstableLatest || a.resp.unstableLatest},`,
      `    encodeRequest: (w, m, version) => load${a.req.name}().encode${a.req.name}(w, m, version),`,
      `    decodeRequest: (r, version) => load${a.req.name}().decode${a.req.name}(r, version),`,
      `    encodeResponse: (w, m, version) => load${a.resp.name}().encode${a.resp.name}(w, m, version),`,
      `    decodeResponse: (r, version) => load${a.resp.name}().decode${a.resp.name}(r, version),`,
      '  },',
    );
  }
  out.push('};', '');
  out.push('/** All APIs sorted by API key. */', 'export const apiSpecList: readonly AnyApiSpec[] = [');
  for (const a of list) out.push(`  apiSpecs[${a.key}],`);
  out.push('];', '');
  out.push(
    '/** Loads every message module now (e.g. to warm up before serving, or in benchmarks). */',
    'export function preloadAllCodecs(): void {',
    ...names.map((n) => `  load${n}();`),
    '}',
    '',
    'const specByKey: (AnyApiSpec | undefined)[] = [];',
    'for (const s of apiSpecList) specByKey[s.apiKey] = s;',
    '',
    '/** The spec of an API key, or undefined when the key is not supported. */',
    'export function getApiSpec(apiKey: number): AnyApiSpec | undefined {',
    '  return specByKey[apiKey];',
    '}',
    '',
  );
  out.push(...frameFunctions(byName, apis, list));
  return out.join('\n');
}

/**
 * Header versions and frame codecs: which header version a request or
 * response uses, reading a request header, writing whole frames.
 */
function frameFunctions(byName, apis, list) {
  const out = [];
  out.push('const responseFlexibleMin: number[] = [];');
  for (const a of list) out.push(`responseFlexibleMin[${a.key}] = ${flexibleMin(a.resp)};`);
  out.push('');
  const rh = byName.get('RequestHeader');
  const sh = byName.get('ResponseHeader');
  if (rh.valid.hi !== 2 || sh.valid.hi !== 1) throw new Error('header version helpers assume RequestHeader 0-2 and ResponseHeader 0-1');
  out.push(
    '/**',
    ' * Request header version used by a request: 2 for flexible API versions,',
    ' * 1 otherwise (also for unknown API keys, so that the correlation id and',
    ' * client id can still be read).',
    ' */',
    'export function requestHeaderVersion(apiKey: number, apiVersion: number): number {',
    '  const s = specByKey[apiKey];',
    '  return s !== undefined && apiVersion >= s.flexibleMin ? 2 : 1;',
    '}',
    '',
    '/**',
    ' * Response header version of a response: 1 for flexible API versions, 0',
    ' * otherwise. ApiVersions responses always use header v0 (KIP-511).',
    ' */',
    'export function responseHeaderVersion(apiKey: number, apiVersion: number): number {',
    `  if (apiKey === ${apis.get(18) ? 'ApiKey.ApiVersions' : '18'}) return 0;`,
    '  const f = responseFlexibleMin[apiKey];',
    '  return f !== undefined && apiVersion >= f ? 1 : 0;',
    '}',
    '',
    '/**',
    ' * Reads a request header at the reader position: peeks at the API key and',
    ' * version to choose the header version, then decodes the header.',
    ' */',
    'export function readRequestHeader(r: Reader): RequestHeader {',
    '  r.need(4);',
    '  const apiKey = r.buf.readInt16BE(r.offset);',
    '  const apiVersion = r.buf.readInt16BE(r.offset + 2);',
    '  return decodeRequestHeader(r, requestHeaderVersion(apiKey, apiVersion));',
    '}',
    '',
    '/**',
    ' * Writes a complete response frame into `w`: int32 size prefix, response',
    ' * header (version chosen by responseHeaderVersion) and body. Returns the',
    ' * frame as chunks (w.finish()), ready for socket.writev / cork+write.',
    ' * `w` must be empty (new or just finished); large bytes/records values in',
    ' * the body are referenced, not copied, until the chunks are written out.',
    ' */',
    'export function encodeResponseFrame<K extends ApiKey>(',
    '  w: Writer,',
    '  apiKey: K,',
    '  apiVersion: number,',
    '  correlationId: number,',
    '  body: ApiResponseMap[K],',
    '): Buffer[] {',
    '  const spec: ApiSpec<ApiRequestMap[K], ApiResponseMap[K]> = apiSpecs[apiKey];',
    '  const start = w.length;',
    '  const size = w.reserve(4);',
    '  encodeResponseHeader(w, { correlationId }, responseHeaderVersion(apiKey, apiVersion));',
    '  spec.encodeResponse(w, body, apiVersion);',
    '  size.writeInt32BE(w.length - start - 4, 0);',
    '  return w.finish();',
    '}',
    '',
    '/**',
    ' * Writes a complete request frame (int32 size, request header, body);',
    ' * used by tests and clients.',
    ' */',
    'export function encodeRequestFrame<K extends ApiKey>(',
    '  w: Writer,',
    '  apiKey: K,',
    '  apiVersion: number,',
    '  correlationId: number,',
    '  clientId: string | null,',
    '  body: ApiRequestMap[K],',
    '): Buffer[] {',
    '  const spec: ApiSpec<ApiRequestMap[K], ApiResponseMap[K]> = apiSpecs[apiKey];',
    '  const start = w.length;',
    '  const size = w.reserve(4);',
    '  encodeRequestHeader(',
    '    w,',
    '    { requestApiKey: apiKey, requestApiVersion: apiVersion, correlationId, clientId },',
    '    requestHeaderVersion(apiKey, apiVersion),',
    '  );',
    '  spec.encodeRequest(w, body, apiVersion);',
    '  size.writeInt32BE(w.length - start - 4, 0);',
    '  return w.finish();',
    '}',
    '',
  );
  return out;
}

module.exports = { genIndexFile };
