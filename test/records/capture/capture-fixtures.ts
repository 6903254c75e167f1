// Dev tool, not a test: captures the `records` bytes that real Kafka clients put in Produce requests, into
// test/records/fixtures/<client>-<codec>.bin. Run after a
// build, with the clients' toolchains present (see compat/README.md):
//
//   node dist/test/records/capture/capture-fixtures.js [client ...]     clients: kafkajs kcat java kafka-python franz-go cli
//
// It starts a Fjord broker whose Produce handler also keeps the bytes of the first batch per topic.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startBroker } from '../../../src/broker';
import { ApiKey } from '../../../src/protocol/generated';
import type { ProduceRequest } from '../../../src/protocol/generated/ProduceRequest';
import type { ApiHandler } from '../../../src/handlers/handler';
import { buildBatchSync, Compression, crc32c, RECORDS_OFFSET } from '../../../src/records';
import { bigValue, FIXTURE_DIR } from '../fixture-util';

const captured = new Map<string, Buffer>();

/** Records the first batch each topic receives, then lets the broker's own Produce handler store it. */
function captureProduce(produce: ApiHandler): void {
  const store = produce.handle.bind(produce);
  produce.handle = (req, ctx) => {
    for (const t of (req as ProduceRequest).topicData) {
      for (const p of t.partitionData) if (p.records && t.name && !captured.has(t.name)) captured.set(t.name, Buffer.from(p.records));
    }
    return store(req, ctx);
  };
}

/** Run a program without blocking the event loop (the broker answering it lives in this process). */
function run(cmd: string, args: string[], input?: string, timeoutMs = 60000): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['pipe', 'inherit', 'inherit'] });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else reject(new Error(`${cmd} exited with ${code ?? signal}`));
    });
    child.stdin.end(input ?? '');
  });
}

/** Run a filter program: stdin -> stdout. */
function filter(cmd: string, args: string[], input: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'inherit'] });
    const out: Buffer[] = [];
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(Buffer.concat(out)) : reject(new Error(`${cmd} exited with ${code}`))));
    child.stdin.end(input);
  });
}

/**
 * Batches whose records section is compressed by the reference CLIs with frame options no client above
 * uses: LZ4 linked blocks with content size, block and content checksums; zstd as two frames.
 */
async function cliFixtures(): Promise<void> {
  const plain = buildBatchSync({
    records: [
      { key: 'k1', value: 'hello', headers: [{ key: 'h1', value: 'v1' }], timestamp: 1700000000000 },
      { key: null, value: 'no-key', timestamp: 1700000000001 },
      { key: 'big', value: bigValue(), timestamp: 1700000000002 },
      { key: 'k4', value: null, timestamp: 1700000000003 },
    ],
  });
  const body = plain.subarray(RECORDS_OFFSET);
  const variants: [string, number, Buffer][] = [
    ['cli-lz4-linked-checksums', Compression.LZ4, await filter('lz4', ['-q', '-c', '-BD', '-B4', '--content-size', '-BX'], body)],
    ['cli-zstd-two-frames', Compression.ZSTD, Buffer.concat([
      await filter('zstd', ['-q', '-c'], body.subarray(0, 50000)),
      await filter('zstd', ['-q', '-c', '--no-check'], body.subarray(50000)),
    ])],
  ];
  for (const [name, codec, section] of variants) {
    const batch = Buffer.concat([plain.subarray(0, RECORDS_OFFSET), section]);
    batch.writeInt32BE(batch.length - 12, 8);
    batch.writeInt16BE(codec, 21);
    batch.writeUInt32BE(crc32c(batch, 21), 17);
    fs.writeFileSync(path.join(FIXTURE_DIR, `${name}.bin`), batch);
    console.log(`${name}: ${batch.length} bytes`);
  }
}

interface Job {
  client: string;
  codec: string;
  run(bootstrap: string, topic: string, bigFile: string): Promise<void>;
}

const CODECS = ['none', 'gzip', 'snappy', 'lz4', 'zstd'];
const ROOT = path.resolve(__dirname, '../../../..');

function jobs(): Job[] {
  const out: Job[] = [];
  for (const codec of ['none', 'gzip']) {
    out.push({
      client: 'kafkajs',
      codec,
      async run(bootstrap, topic) {
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        const { Kafka, CompressionTypes, logLevel } = require('kafkajs');
        const kafka = new Kafka({ brokers: [bootstrap], clientId: 'capture', logLevel: logLevel.NOTHING });
        const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
        await producer.connect();
        await producer.send({
          topic,
          compression: codec === 'gzip' ? CompressionTypes.GZIP : CompressionTypes.None,
          messages: [
            { partition: 0, key: 'k1', value: 'hello', headers: { h1: 'v1' } },
            { partition: 0, key: null, value: 'no-key' },
            { partition: 0, key: 'big', value: bigValue() },
            { partition: 0, key: 'k4', value: null },
          ],
        });
        await producer.disconnect();
      },
    });
  }
  for (const codec of CODECS) {
    out.push({
      client: 'kcat',
      codec,
      async run(bootstrap, topic) {
        // One message per line, key and value split by a tab; -Z sends the empty value as NULL.
        const input = `k1\thello\n\tno-key\nbig\t${bigValue().toString()}\nk4\t\n`;
        await run(
          'kcat',
          ['-P', '-b', bootstrap, '-t', topic, '-p', '0', '-z', codec, '-K', '\t', '-Z', '-H', 'h1=v1', '-X', 'linger.ms=200', '-X', 'batch.size=1000000'],
          input,
        );
      },
    });
  }
  for (const codec of CODECS) {
    out.push({
      client: 'java',
      codec,
      async run(bootstrap, topic, bigFile) {
        const lib = path.join(ROOT, 'compat/java/target/lib');
        const cp = fs.readdirSync(lib).map((j) => path.join(lib, j));
        const classes = fs.mkdtempSync(path.join(os.tmpdir(), 'fjord-javaproduce-'));
        await run('javac', ['-cp', cp.join(':'), '-d', classes, path.join(ROOT, 'test/records/capture/JavaProduce.java')]);
        await run('java', ['-cp', [...cp, classes].join(':'), 'JavaProduce', bootstrap, topic, codec, bigFile]);
      },
    });
  }
  for (const codec of ['none', 'gzip']) {
    out.push({
      client: 'kafka-python',
      codec,
      async run(bootstrap, topic, bigFile) {
        const py = path.join(ROOT, 'compat/python/.venv/bin/python');
        await run(py, [path.join(ROOT, 'test/records/capture/kafka_python_produce.py'), bootstrap, topic, codec, bigFile]);
      },
    });
  }
  for (const codec of CODECS) {
    out.push({
      client: 'franz-go',
      codec,
      async run(bootstrap, topic, bigFile) {
        const bin = path.join(os.tmpdir(), 'fjord-franzgo-produce');
        if (!fs.existsSync(bin)) await run('go', ['-C', path.join(ROOT, 'test/records/capture/franzgo'), 'build', '-o', bin, '.'], undefined, 300000);
        await run(bin, [bootstrap, topic, codec, bigFile]);
      },
    });
  }
  return out;
}

async function main(): Promise<void> {
  const only = process.argv.slice(2);
  const broker = await startBroker({ port: 0, logLevel: 'silent' });
  captureProduce(broker.broker.router.handler(ApiKey.Produce)!);
  if (only.length === 0 || only.includes('cli')) await cliFixtures().catch((e) => console.error(`cli: FAILED ${(e as Error).message}`));
  const bigFile = path.join(os.tmpdir(), `fjord-big-${process.pid}.bin`);
  fs.writeFileSync(bigFile, bigValue());
  try {
    for (const job of jobs()) {
      if (only.length > 0 && !only.includes(job.client)) continue;
      const topic = `capture-${job.client}-${job.codec}`;
      try {
        await job.run(broker.bootstrap, topic, bigFile);
      } catch (e) {
        console.error(`${job.client} ${job.codec}: FAILED ${(e as Error).message}`);
        continue;
      }
      const bytes = captured.get(topic);
      if (!bytes) {
        console.error(`${job.client} ${job.codec}: no Produce request captured`);
        continue;
      }
      const name = `${job.client}-${job.codec}`;
      fs.writeFileSync(path.join(FIXTURE_DIR, `${name}.bin`), bytes);
      console.log(`${name}: ${bytes.length} bytes`);
    }
  } finally {
    fs.rmSync(bigFile, { force: true });
    await broker.close();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
