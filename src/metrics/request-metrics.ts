/**
 * Kafka's RequestMetrics (kafka.network:type=RequestMetrics,name=...,request=API): per API, the
 * requests answered, the error codes in their responses, and histograms of where their time went
 * (Kafka's split, in milliseconds as its TotalTimeMs) and of their sizes. Fetch is counted both as
 * Fetch and as FetchConsumer or FetchFollower, as Kafka does. The label is the API's name, so the
 * series are bounded by the APIs served; the connection holds each API's ApiMeters.
 */
import type { Registry } from 'prom-client';
import { errorName } from '../common/errors';
import { Histogram, HistogramSeries, registerCollected, SIZE_BUCKETS, TIME_MS_BUCKETS } from './instruments';

/** What one request took, in milliseconds, and its sizes in bytes. */
export interface RequestTiming {
  /** From the frame being taken off the socket to the handler's start (Kafka's RequestQueueTimeMs). */
  queueMs: number;
  /** The handler's own time: from its start to its response, less the remote time (LocalTimeMs). */
  localMs: number;
  /** Waiting in a purgatory: acks=all replication, a fetch's long poll (RemoteTimeMs). */
  remoteMs: number;
  /** From its response being ready to being handed to the socket, behind earlier ones (ResponseQueueTimeMs). */
  responseQueueMs: number;
  /** From the write to the socket taking it (ResponseSendTimeMs). */
  sendMs: number;
  /** From the frame to the response sent (TotalTimeMs). */
  totalMs: number;
  requestBytes: number;
  /** 0 when no response is sent (acks=0). */
  responseBytes: number;
}

export class ApiMeters {
  requests = 0;
  /** Responses' error codes (NONE included, as Kafka's ErrorsPerSec): the count of code c at c + 1. */
  readonly errors = new Float64Array(ERROR_CODE_SLOTS);
  readonly totalTime: HistogramSeries;
  readonly queueTime: HistogramSeries;
  readonly localTime: HistogramSeries;
  readonly remoteTime: HistogramSeries;
  readonly responseQueueTime: HistogramSeries;
  readonly sendTime: HistogramSeries;
  readonly requestBytes: HistogramSeries;
  readonly responseBytes: HistogramSeries;

  constructor(readonly request: string, h: RequestHistograms) {
    const labels = { request };
    this.totalTime = h.totalTime.series(labels);
    this.queueTime = h.queueTime.series(labels);
    this.localTime = h.localTime.series(labels);
    this.remoteTime = h.remoteTime.series(labels);
    this.responseQueueTime = h.responseQueueTime.series(labels);
    this.sendTime = h.sendTime.series(labels);
    this.requestBytes = h.requestBytes.series(labels);
    this.responseBytes = h.responseBytes.series(labels);
  }

  record(t: RequestTiming): void {
    this.requests++;
    this.totalTime.observe(t.totalMs);
    this.queueTime.observe(t.queueMs);
    this.localTime.observe(t.localMs);
    this.remoteTime.observe(t.remoteMs);
    this.responseQueueTime.observe(t.responseQueueMs);
    this.sendTime.observe(t.sendMs);
    this.requestBytes.observe(t.requestBytes);
    if (t.responseBytes > 0) this.responseBytes.observe(t.responseBytes);
  }

  /** Counts every errorCode of a response (top level, per topic, per partition, ...), as Kafka's errorCounts. */
  recordErrors(response: object): void {
    countErrorCodes(response, this.errors);
  }
}

interface RequestHistograms {
  totalTime: Histogram;
  queueTime: Histogram;
  localTime: Histogram;
  remoteTime: Histogram;
  responseQueueTime: Histogram;
  sendTime: Histogram;
  requestBytes: Histogram;
  responseBytes: Histogram;
}

export class RequestMetrics {
  private readonly histograms: RequestHistograms;
  private readonly apis = new Map<string, ApiMeters>();

  constructor(registry: Registry) {
    const time = (name: string, what: string) =>
      new Histogram(registry, `kafka_network_requestmetrics_${name}`, `${what}, in milliseconds, per API`, TIME_MS_BUCKETS);
    const size = (name: string, what: string) =>
      new Histogram(registry, `kafka_network_requestmetrics_${name}`, `${what}, in bytes, per API`, SIZE_BUCKETS);
    this.histograms = {
      totalTime: time('totaltimems', 'Time from a request read to its response sent (TotalTimeMs)'),
      queueTime: time('requestqueuetimems', 'Time a request waited for its handler to start (RequestQueueTimeMs)'),
      localTime: time('localtimems', 'Time in the request handler, less the remote time (LocalTimeMs)'),
      remoteTime: time('remotetimems', 'Time waiting in a purgatory: acks=all, long-poll fetch (RemoteTimeMs)'),
      responseQueueTime: time('responsequeuetimems', 'Time a response waited behind earlier ones of its connection (ResponseQueueTimeMs)'),
      sendTime: time('responsesendtimems', 'Time from a response written to the socket taking it (ResponseSendTimeMs)'),
      requestBytes: size('requestbytes', 'Size of requests (RequestBytes)'),
      responseBytes: size('responsebytes', 'Size of responses'),
    };
    registerCollected(registry, {
      name: 'kafka_network_requestmetrics_requests_total', help: 'Requests answered, per API (RequestsPerSec)', type: 'counter',
      read: () => [...this.apis.values()].map((a) => ({ labels: { request: a.request }, value: a.requests })),
    });
    registerCollected(registry, {
      name: 'kafka_network_requestmetrics_errors_total', type: 'counter',
      help: 'Error codes in responses (NONE included), per API and error name (ErrorsPerSec)',
      read: () => [...this.apis.values()].flatMap((a) =>
        [...a.errors].flatMap((n, slot) => (n === 0 ? [] : [{ labels: { request: a.request, error: errorName(slot - 1) }, value: n }]))),
    });
  }

  /** The meters of the API of this name (Kafka's: Produce, Fetch, FetchConsumer, ...); made at first use. */
  api(request: string): ApiMeters {
    let meters = this.apis.get(request);
    if (!meters) this.apis.set(request, (meters = new ApiMeters(request, this.histograms)));
    return meters;
  }
}

/** Kafka's error codes run from -1 (UNKNOWN_SERVER_ERROR) to some 130; a code outside counts as UNKNOWN_SERVER_ERROR. */
const ERROR_CODE_SLOTS = 256;

/**
 * Adds up the `errorCode` fields of a decoded response, at any depth; record bytes (Buffers) and
 * other values are not entered. One pass over the response's objects, as Kafka's errorCounts.
 */
function countErrorCodes(value: object, counts: Float64Array): void {
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      if (typeof item === 'object' && item !== null) countErrorCodes(item, counts);
    }
    return;
  }
  if (ArrayBuffer.isView(value)) return;
  const fields = value as Record<string, unknown>;
  for (const key in fields) {
    const field = fields[key];
    if (typeof field === 'object') {
      if (field !== null) countErrorCodes(field, counts);
    } else if (key === 'errorCode' && typeof field === 'number') {
      counts[field >= -1 && field < ERROR_CODE_SLOTS - 1 ? field + 1 : 0]++;
    }
  }
}
