// DescribeLogDirs (key 35), versions 0-5.
// - One log dir, the data dir (absolute path), as Kafka's ReplicaManager.describeLogDirs reports
//   each of its dirs: per topic, each requested partition hosted there with its size in bytes
//   (all segments), offset lag max(HW - LEO, 0) (0 for the current replica) and isFutureKey false.
// - Null topics: every partition of every log. Requested partitions we do not host are left
//   out, and so are topics left with none.
// - v4+: the file system's total and usable bytes. v5+: IsCordoned (KIP-1066), false: Fjord has
//   no cordoning of log dirs.
// - The dir is always in the answer (the Java AdminClient reads an empty result list as
//   CLUSTER_AUTHORIZATION_FAILED); when a log of it is offline, or the file system cannot be
//   read, the dir answers KAFKA_STORAGE_ERROR with no topics, as Kafka does for an offline dir.
import type { Logger } from 'pino';
import { ApiKey } from '../protocol/generated';
import type {
  DescribeLogDirsResponseDescribeLogDirsResult as LogDirResult, DescribeLogDirsResponseDescribeLogDirsTopic as LogDirTopic,
} from '../protocol/generated/DescribeLogDirsResponse';
import { ErrorCode } from '../common/errors';
import type { BrokerConfig } from '../config/broker-config';
import type { LogManager } from '../storage';
import { defineHandler } from './handler';

const INT64_MAX = (1n << 63n) - 1n;

export interface DescribeLogDirsServices {
  readonly config: Pick<BrokerConfig, 'dataDir'>;
  readonly replicas: { readonly logs: Pick<LogManager, 'allLogs' | 'diskUsage'> };
  readonly log: Pick<Logger, 'warn'>;
}

export const describeLogDirs = defineHandler(ApiKey.DescribeLogDirs, { minVersion: 0, maxVersion: 5 }, (s: DescribeLogDirsServices) => async (req) => {
  const logs = s.replicas.logs;
  const logDir = s.config.dataDir;
  const wanted = req.topics === null ? null
    : new Set(req.topics.flatMap((t) => t.partitions.map((p) => `${t.topic}\0${p}`)));
  const all = logs.allLogs();
  let result: LogDirResult;
  try {
    if (all.some((l) => l.offline)) throw new Error(`a log in ${logDir} is offline`);
    const usage = await logs.diskUsage();
    const byTopic = new Map<string, LogDirTopic>();
    for (const log of all.sort((a, b) => a.topic.localeCompare(b.topic) || a.partition - b.partition)) {
      if (wanted && !wanted.has(`${log.topic}\0${log.partition}`)) continue;
      let topic = byTopic.get(log.topic);
      if (!topic) byTopic.set(log.topic, (topic = { name: log.topic, partitions: [] }));
      topic.partitions.push({
        partitionIndex: log.partition,
        partitionSize: BigInt(log.size),
        offsetLag: BigInt(Math.max(log.highWatermark - log.logEndOffset, 0)),
        isFutureKey: false,
      });
    }
    result = {
      errorCode: ErrorCode.NONE, logDir, topics: [...byTopic.values()],
      totalBytes: fileSystemBytes(usage.totalBytes), usableBytes: fileSystemBytes(usage.usableBytes), isCordoned: false,
    };
  } catch (err) {
    s.log.warn({ err, logDir }, 'unable to describe the log dir');
    result = { errorCode: ErrorCode.KAFKA_STORAGE_ERROR, logDir, topics: [], totalBytes: -1n, usableBytes: -1n, isCordoned: false };
  }
  return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, results: [result] };
});

/** Kafka's adjustForLargeFileSystems: sizes that do not fit an int64 are reported as its maximum. */
function fileSystemBytes(n: number): bigint {
  if (!Number.isFinite(n) || n < 0) return INT64_MAX;
  const b = BigInt(Math.floor(n));
  return b > INT64_MAX ? INT64_MAX : b;
}
