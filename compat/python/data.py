"""The data-path scenarios' records and checks, shared by the Python client programs (see compat/lib/data.js)."""
import re
import time

from common import check

CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]
TAG = "fjørd".encode()


def key(i):
    return f"key-{i}".encode()


def value(i):
    return f"value-{i}:".encode() + b"\x00\xff\n" + b"fjord-compat " * 8


def headers(i):
    return [("idx", str(i).encode()), ("tag", TAG)]


def large(i):
    block = bytes((j + i) & 0xFF for j in range(256))
    return block * 4096


def murmur2(data):
    """Kafka's murmur2 (Utils.murmur2) as a signed 32-bit int."""
    m, mask = 0x5BD1E995, 0xFFFFFFFF
    length = len(data)
    h = (0x9747B28C ^ length) & mask
    n4 = length // 4
    for i in range(n4):
        k = int.from_bytes(data[i * 4:i * 4 + 4], "little")
        k = (k * m) & mask
        k ^= k >> 24
        k = (k * m) & mask
        h = ((h * m) & mask) ^ k
    tail = data[n4 * 4:]
    if len(tail) >= 3:
        h ^= tail[2] << 16
    if len(tail) >= 2:
        h ^= tail[1] << 8
    if tail:
        h ^= tail[0]
        h = (h * m) & mask
    h ^= h >> 13
    h = (h * m) & mask
    h ^= h >> 15
    return h - (1 << 32) if h & 0x80000000 else h


check(murmur2(b"21") == -973932308 and murmur2(b"foobar") == -790332482, "murmur2 self-test failed")


def key_partition(k, partitions):
    return (murmur2(k) & 0x7FFFFFFF) % partitions


def verify_records(records, n, headers_of=headers):
    """records: [(partition, offset, key, value, headers)]; exactly records 0..n-1, intact, in order per partition."""
    seen, last = set(), {}
    for p, o, k, v, hs in records:
        m = re.fullmatch(rb"key-(\d+)", k or b"")
        check(m and int(m[1]) < n, f"unexpected key {k!r} at partition {p} offset {o}")
        i = int(m[1])
        check(i not in seen, f"duplicate record key-{i} (partition {p} offset {o})")
        seen.add(i)
        check(v == value(i), f"key-{i}: value {v!r}, expected {value(i)!r}")
        check(list(hs or []) == headers_of(i), f"key-{i}: headers {hs!r}, expected {headers_of(i)!r}")
        prev = last.get(p)
        check(prev is None or (o > prev[0] and i > prev[1]), f"partition {p} out of order: key-{i} at offset {o} after {prev}")
        last[p] = (o, i)
    check(len(records) == n, f"consumed {len(records)} records, expected {n} ({n - len(seen)} missing)")


def verify_keyed(records, n, partitions):
    where = {}
    for p, o, k, v, hs in records:
        check(where.setdefault(k, p) == p, f"key {k!r} on partitions {where[k]} and {p}")
        check(p == key_partition(k, partitions), f"key {k!r} on partition {p}, murmur2 says {key_partition(k, partitions)}")
    check(len(records) == n, f"consumed {len(records)} records, expected {n}")


def verify_large(records):
    check(len(records) == 5, f"consumed {len(records)} records, expected 5")
    for i, (p, o, k, v, hs) in enumerate(records):
        check(k == f"large-{i}".encode() and v == large(i), f"record {i} (key {k!r}) differs: {len(v or b'')} bytes")


def time_queries(count=10):
    """T and the lookups (target timestamp, expected offset or None = after the last record)."""
    t = (int(time.time()) - 60) * 1000
    return t, count, [(t - 500, 0), (t, 0), (t + 4000, 4), (t + 4500, 5), (t + (count - 1) * 1000, count - 1), (t + count * 1000, None)]


def topic_name(client, prefix):
    return f"compat-{client}-{prefix}-{time.time_ns()}"
