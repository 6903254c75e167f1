// Runs one of Kafka 4.4's own command-line tools (the Maven kafka-tools artifact that
// `compat/lib/apache-kafka.sh fetch-tools` prepared) against a broker of this process.
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '../../..');
const KAFKA_SH = path.join(ROOT, 'compat/lib/apache-kafka.sh');
const TOOLS_CLASSPATH = path.join(os.homedir(), '.m2/fjord/apache-kafka-4.4.0/tools/classpath');

/** Whether the tools are fetched (tests using them are pending otherwise). */
export function kafkaToolsFetched(): boolean {
  return fs.existsSync(TOOLS_CLASSPATH);
}

/**
 * Runs the tool's main class with `--bootstrap-server bootstrap` and `args`, asynchronously (the broker
 * answers from this process): its exit status, its stdout without SLF4J's and empty lines, its stderr.
 */
export function runKafkaTool(mainClass: string, bootstrap: string, ...args: string[]): Promise<{ status: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile(KAFKA_SH, ['tool', mainClass, '--bootstrap-server', bootstrap, ...args],
      { encoding: 'utf8', timeout: 120_000 }, (err, stdout, stderr) => resolve({
        status: err ? (typeof err.code === 'number' ? err.code : null) : 0,
        out: stdout.split('\n').filter((l) => l !== '' && !l.startsWith('SLF4J')).join('\n'),
        err: stderr,
      }));
  });
}

/** Kafka's kafka-configs (ConfigCommand) with `args`. */
export const kafkaConfigs = (bootstrap: string, ...args: string[]) => runKafkaTool('org.apache.kafka.tools.ConfigCommand', bootstrap, ...args);

/** Skips the suite's tests when the tools are not fetched. */
export function skipUnlessKafkaToolsFetched(): void {
  before(function () {
    if (!kafkaToolsFetched()) this.skip();
  });
}
