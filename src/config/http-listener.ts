/** The `http.listener` value (HOST:PORT of the HTTP listener of metrics and the console), parsed. */

export interface HttpListenerAddress {
  /** '' binds every interface (as Kafka's `PLAINTEXT://:9092`). */
  host: string;
  /** 0 picks a free port. */
  port: number;
}

/** HOST:PORT, [IPv6]:PORT or :PORT; '' (or blanks) is no listener (null). Throws with the reason otherwise. */
export function parseHttpListener(value: string): HttpListenerAddress | null {
  const trimmed = value.trim();
  if (trimmed === '') return null;
  const match = /^(\[[0-9a-fA-F:.]+\]|[^:[\]\s]*):(\d{1,5})$/.exec(trimmed);
  if (!match) throw new Error('Expected HOST:PORT (e.g. 127.0.0.1:8080), or empty for no HTTP listener');
  const port = Number(match[2]);
  if (port > 65535) throw new Error(`Port ${port} is out of range [0, 65535]`);
  const host = match[1].startsWith('[') ? match[1].slice(1, -1) : match[1];
  return { host, port };
}
