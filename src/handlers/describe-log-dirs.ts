// DescribeLogDirs (key 35), versions 0-5.
// - Every log dir (log.dirs, absolute paths, in their configured order), as Kafka's
//   ReplicaManager.describeLogDirs reports them: per topic, each requested partition hosted there
//   with its size in bytes (all segments), offset lag max(HW - LEO, 0) (0 for the current replica)
//   and isFutureKey false. A replica being moved to another dir (AlterReplicaLogDirs) shows twice:
//   in its dir, and in the target dir as the future replica, isFutureKey true, offset lag its log
//   end offset behind the current replica's.
// - Null topics: every partition of every log. Requested partitions we do not host are left
//   out, and so are topics left with none.
// - v4+: the file system's total and usable bytes. v5+: IsCordoned (KIP-1066), false: Fjord has
//   no cordoning of log dirs.
// - Every dir is always in the answer (the Java AdminClient reads an empty result list as
//   CLUSTER_AUTHORIZATION_FAILED); a dir that is offline (unreadable at start-up, or a log of it
//   offline), or whose file system cannot be read, answers KAFKA_STORAGE_ERROR with no topics,
//   as Kafka does for an offline dir.
// - Without DESCRIBE on the cluster: no results, and (v3+) the error CLUSTER_AUTHORIZATION_FAILED.
import type { Logger } from 'pino';
import { ApiKey } from '../protocol/generated';
import type {
  DescribeLogDirsResponseDescribeLogDirsResult as LogDirResult, DescribeLogDirsResponseDescribeLogDirsTopic as LogDirTopic,
} from '../protocol/generated/DescribeLogDirsResponse';
import { ErrorCode } from '../common/errors';
import type { BrokerConfig } from '../config/broker-config';
import type { LogManager } from '../storage';
import { AclOperation } from '../security/acl';
import { authorizeCluster } from './shared/authorization';
import { defineHandler } from './handler';

const INT64_MAX = (1n << 63n) - 1n;

export interface DescribeLogDirsServices {
  readonly config: Pick<BrokerConfig, 'logDirs'>;
  readonly replicas: { readonly logs: Pick<LogManager, 'allLogs' | 'futureLogs' | 'logDirOf' | 'isLogDirOnline' | 'diskUsage' | 'get'> };
  readonly log: Pick<Logger, 'warn'>;
}

export const describeLogDirs = defineHandler(ApiKey.DescribeLogDirs, { minVersion: 0, maxVersion: 5 }, (s: DescribeLogDirsServices) => async (req, ctx) => {
  if (!authorizeCluster(ctx, AclOperation.DESCRIBE)) return { throttleTimeMs: 0, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, results: [] };
  const logs = s.replicas.logs;
  const wanted = req.topics === null ? null
    : new Set(req.topics.flatMap((t) => t.partitions.map((p) => `${t.topic}\0${p}`)));
  const replicas = [...logs.allLogs().map((log) => ({ log, isFuture: false })), ...logs.futureLogs().map((log) => ({ log, isFuture: true }))]
    .filter(({ log }) => !wanted || wanted.has(`${log.topic}\0${log.partition}`))
    .sort((a, b) => a.log.topic.localeCompare(b.log.topic) || a.log.partition - b.log.partition);
  const results: LogDirResult[] = [];
  for (const logDir of s.config.logDirs) {
    try {
      if (!logs.isLogDirOnline(logDir)) throw new Error(`the log dir ${logDir} is offline`);
      const usage = await logs.diskUsage(logDir);
      const byTopic = new Map<string, LogDirTopic>();
      for (const { log, isFuture } of replicas) {
        if (logs.logDirOf(log) !== logDir) continue;
        let topic = byTopic.get(log.topic);
        if (!topic) byTopic.set(log.topic, (topic = { name: log.topic, partitions: [] }));
        // Kafka's getLogEndOffsetLag: the future replica's lag is behind the current one.
        const lag = isFuture ? (logs.get(log.topic, log.partition)?.logEndOffset ?? log.logEndOffset) - log.logEndOffset
          : Math.max(log.highWatermark - log.logEndOffset, 0);
        topic.partitions.push({ partitionIndex: log.partition, partitionSize: BigInt(log.size), offsetLag: BigInt(lag), isFutureKey: isFuture });
      }
      results.push({
        errorCode: ErrorCode.NONE, logDir, topics: [...byTopic.values()],
        totalBytes: fileSystemBytes(usage.totalBytes), usableBytes: fileSystemBytes(usage.usableBytes), isCordoned: false,
      });
    } catch (err) {
      s.log.warn({ err, logDir }, 'unable to describe the log dir');
      results.push({ errorCode: ErrorCode.KAFKA_STORAGE_ERROR, logDir, topics: [], totalBytes: -1n, usableBytes: -1n, isCordoned: false });
    }
  }
  return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, results };
});
/** Kafka's adjustForLargeFileSystems: sizes that do not fit an int64 are reported as its maximum. */
function fileSystemBytes(n: number): bigint {
  if (!Number.isFinite(n) || n < 0) return INT64_MAX;
  const b = BigInt(Math.floor(n));
  return b > INT64_MAX ? INT64_MAX : b;
}
