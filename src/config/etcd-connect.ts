/**
 * `etcd.connect`: where a broker in cluster mode finds etcd, in the form of Kafka's old
 * `zookeeper.connect` — `HOST:PORT[,HOST:PORT...][/prefix]`. The optional path at the end is the
 * chroot: every key of the cluster lives under it, so several clusters can share one etcd.
 * Empty means no cluster mode (the single broker).
 */
import { invalidValue } from './definitions';

const KEY = 'etcd.connect';

export interface EtcdConnect {
  /** `host:port` of each etcd member, in the order given (IPv6 hosts keep their brackets). */
  readonly endpoints: readonly string[];
  /** The chroot: '' (none) or '/a/b' (leading '/', no trailing '/'). Every key is prefix + '/...'. */
  readonly prefix: string;
}

const ENDPOINT_RE = /^(\[[0-9a-fA-F:.%a-zA-Z]+\]|[0-9a-zA-Z\-._]+):(\d+)$/;
const PREFIX_SEGMENT_RE = /^[0-9a-zA-Z\-._]+$/;

/** Parses a non-empty `etcd.connect`; throws ConfigError naming the key and what is wrong. */
export function parseEtcdConnect(raw: string): EtcdConnect {
  const text = raw.trim();
  const slash = text.indexOf('/');
  const hostList = slash < 0 ? text : text.slice(0, slash);
  const chroot = slash < 0 ? '' : text.slice(slash);

  const endpoints = hostList.split(',').map((e) => e.trim());
  for (const ep of endpoints) {
    const m = ENDPOINT_RE.exec(ep);
    if (!m) throw invalidValue(KEY, raw, `'${ep}' is not HOST:PORT (expected HOST:PORT[,HOST:PORT...][/prefix])`);
    const port = Number(m[2]);
    if (port < 1 || port > 65535) throw invalidValue(KEY, raw, `port ${m[2]} of '${ep}' must be between 1 and 65535`);
  }

  // As Kafka's chroot: '/' alone is no chroot; a trailing '/' or an empty segment is a mistake.
  if (chroot === '/') return { endpoints, prefix: '' };
  if (chroot !== '' && !chroot.slice(1).split('/').every((s) => PREFIX_SEGMENT_RE.test(s))) {
    throw invalidValue(KEY, raw, `prefix '${chroot}' must be /segment[/segment...] of letters, digits, '-', '.' or '_'`);
  }
  return { endpoints, prefix: chroot };
}
