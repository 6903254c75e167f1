'use strict';
// DescribeLogDirs v1 by hand on a socket (as lib/api-versions.js: no client library, no Fjord code), for the
// cluster rows that watch a replica's size while it is copied (cluster/partitions-test.js): kafkajs has no
// DescribeLogDirs, and a kafka-log-dirs JVM per sample would be too slow to see a rate. DescribeLogDirs is
// answered by the broker asked, about its own log dirs.
//
//   await describeLogDirs('127.0.0.1:9092')   // [{ errorCode, logDir, topics: [{ name, partitions: [{ partition, size, offsetLag, isFuture }] }] }]
//   await replicaSize('127.0.0.1:9092', topic, 0)  // the partition's log size on that broker (the future replica's
//                                                   // if it has one), or null when it has no such log
const { roundTrip, Reader } = require('./api-versions');

const DESCRIBE_LOG_DIRS = 35;
const VERSION = 1; // the last non-flexible version: header v1, int16 strings, int32 arrays

/** Header v1 (key, version, correlation id, client id), then topics = null (every log of every dir). */
function requestFrame(correlationId) {
  const clientId = Buffer.from('fjord-compat');
  const frame = Buffer.alloc(4 + 10 + clientId.length + 4);
  let at = frame.writeInt32BE(frame.length - 4, 0);
  at = frame.writeInt16BE(DESCRIBE_LOG_DIRS, at);
  at = frame.writeInt16BE(VERSION, at);
  at = frame.writeInt32BE(correlationId, at);
  at = frame.writeInt16BE(clientId.length, at);
  at += clientId.copy(frame, at);
  frame.writeInt32BE(-1, at);
  return frame;
}

async function describeLogDirs(hostPort, timeoutMs = 10000) {
  const r = new Reader(await roundTrip(hostPort, requestFrame(1), 'DescribeLogDirs', timeoutMs));
  r.int32(); // correlation id
  r.int32(); // throttle time
  return r.array(() => ({
    errorCode: r.int16(),
    logDir: r.string(),
    topics: r.array(() => ({
      name: r.string(),
      partitions: r.array(() => ({ partition: r.int32(), size: Number(r.int64()), offsetLag: Number(r.int64()), isFuture: r.bool() })),
    })),
  }));
}

async function replicaSize(hostPort, topic, partition) {
  const found = (await describeLogDirs(hostPort)).flatMap((d) => d.topics.filter((t) => t.name === topic).flatMap((t) => t.partitions.filter((p) => p.partition === partition)));
  if (!found.length) return null;
  return (found.find((p) => p.isFuture) || found[0]).size;
}

module.exports = { describeLogDirs, replicaSize };
