/**
 * The HTTP listener (`http.listener`): Prometheus metrics at /metrics, the web console's JSON API
 * under /api/ and its static files everywhere else, on Node's http module.
 *
 * Writes (POST, DELETE) need `Content-Type: application/json`: a page of another origin cannot send
 * that without a CORS preflight, which this server never grants, so it cannot change the cluster
 * through a browser that has the console open.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { jsonReplacer } from '../admin/json';
import type { HttpListenerAddress } from '../config/http-listener';
import type { ConsoleApi, ConsoleApiOptions } from './console-api';
import { HttpError, errorResponse } from './http-error';
import { StaticFiles } from './static-files';

/** Prometheus's text exposition format. */
export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

const MAX_BODY_BYTES = 1 << 20;

export interface HttpListenerOptions extends Omit<ConsoleApiOptions, 'metrics'> {
  /** The Prometheus text of the broker's metrics; without it, no /metrics (`fjord console`). */
  renderMetrics?: () => Promise<string>;
  log: Logger;
}

export interface RunningHttpListener {
  /** As bound: the port picked when 0 was asked. */
  host: string;
  port: number;
  close(): Promise<void>;
}

/** Listens on `address`; a port in use fails with the listener named in the message (the error's code kept). */
export async function startHttpListener(address: HttpListenerAddress, options: HttpListenerOptions): Promise<RunningHttpListener> {
  // The console API and its Kafka client load on the first /api/ request: a broker that nobody
  // browses does not pay their start-up (most of a second of CPU for @platformatic/kafka).
  let loaded: Promise<ConsoleApi> | undefined;
  const api = () => (loaded ??= import('./console-api').then(({ ConsoleApi }) => new ConsoleApi({ ...options, metrics: options.renderMetrics !== undefined })));
  const files = new StaticFiles();
  const server = http.createServer((req, res) => {
    serve(req, res, api, files, options).catch((err: unknown) => {
      options.log.error({ err, url: req.url }, 'HTTP request failed');
      if (!res.headersSent) sendJson(res, 500, { error: 'INTERNAL: the request failed' });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (e: NodeJS.ErrnoException) => {
      const failure = Object.assign(new Error(`HTTP listener (http.listener=${address.host}:${address.port}): ${e.message}`), { code: e.code });
      reject(failure);
    });
    server.listen({ host: address.host === '' ? undefined : address.host, port: address.port }, () => resolve());
  });
  const bound = server.address() as AddressInfo;
  options.log.info({ host: address.host, port: bound.port }, 'HTTP listener open (metrics at /metrics, console at /)');
  let closing: Promise<void> | undefined;
  return {
    host: address.host,
    port: bound.port,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Browsers keep connections open; the listener closes with the broker, not when they leave.
        server.closeAllConnections();
      }).then(async () => {
        if (loaded) await (await loaded).close();
      });
      return closing;
    },
  };
}

async function serve(req: http.IncomingMessage, res: http.ServerResponse, api: () => Promise<ConsoleApi>, files: StaticFiles, options: HttpListenerOptions): Promise<void> {
  let url: URL;
  try {
    url = new URL(req.url ?? '/', 'http://console');
  } catch {
    sendJson(res, 400, { error: `malformed URL: ${req.url}` });
    return;
  }
  const method = req.method ?? 'GET';
  const read = method === 'GET' || method === 'HEAD';
  if (url.pathname === '/api' || url.pathname.startsWith('/api/')) {
    await serveApi(req, res, url, api, options.log);
    return;
  }
  if (!read) {
    sendJson(res, 405, { error: `${method} is not allowed on ${url.pathname}` });
    return;
  }
  if (url.pathname === '/metrics') {
    if (!options.renderMetrics) {
      sendJson(res, 404, { error: 'no metrics: this console serves a remote cluster (scrape its brokers)' });
      return;
    }
    send(res, 200, METRICS_CONTENT_TYPE, await options.renderMetrics());
    return;
  }
  const file = await files.get(url.pathname);
  if (!file) {
    sendJson(res, 404, { error: `not found: ${url.pathname}` });
    return;
  }
  send(res, 200, file.contentType, file.body);
}

async function serveApi(req: http.IncomingMessage, res: http.ServerResponse, url: URL, api: () => Promise<ConsoleApi>, log: Logger): Promise<void> {
  const method = req.method === 'HEAD' ? 'GET' : req.method ?? 'GET';
  let segments: string[];
  try {
    segments = url.pathname.split('/').slice(2).filter(Boolean).map(decodeURIComponent);
  } catch {
    sendJson(res, 400, { error: `malformed path: ${url.pathname}` });
    return;
  }
  try {
    const { status, value } = await (await api()).handle({ method, segments, query: url.searchParams, body: () => readJsonBody(req) });
    sendJson(res, status, value);
  } catch (e) {
    const { status, error, unexpected } = errorResponse(e);
    if (unexpected) log.error({ err: e, url: req.url }, 'console API request failed');
    else log.debug({ status, error, url: req.url }, 'console API request refused');
    sendJson(res, status, { error });
  }
}

async function readJsonBody(req: http.IncomingMessage): Promise<unknown> {
  const type = req.headers['content-type'] ?? '';
  if (!/^application\/json\s*(;|$)/i.test(type)) throw new HttpError(415, 'the body must be JSON, sent with Content-Type: application/json');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new HttpError(413, `the body is larger than ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
  } catch (e) {
    throw new HttpError(400, `the body is not JSON: ${(e as Error).message}`);
  }
}

function sendJson(res: http.ServerResponse, status: number, value: unknown): void {
  send(res, status, 'application/json; charset=utf-8', JSON.stringify(value, jsonReplacer));
}

function send(res: http.ServerResponse, status: number, contentType: string, body: string | Buffer): void {
  res.writeHead(status, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(body), 'X-Content-Type-Options': 'nosniff', 'Cache-Control': 'no-cache' });
  res.end(body);
}
