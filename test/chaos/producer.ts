// One chaos producer, run as its own process by the chaos runner (run.ts): a kafkajs idempotent
// producer sending acks=all batches of numbered records (`name:seq`, seq counting up, never reused)
// round the partitions, and appending one line per acknowledged record, `partition offset name seq`,
// to its acks file as soon as the ack arrives. A failed send drops the producer and starts a new one
// (a new producer id): kafkajs keeps the failed batch's sequence numbers for the next batch, so a
// failed batch that did land would make the broker take the next one for its duplicate.
// SIGTERM: finish the send in flight, then print `{"acked":N,"failed":N}` and exit.
//
//   node dist/test/chaos/producer.js NAME BOOTSTRAP TOPIC PARTITIONS ACKS_FILE
import * as fs from 'fs';
import { Kafka, logLevel, type Producer } from 'kafkajs';
import { recordValue } from './verify';

const RECORDS_PER_SEND = 5;

async function main(): Promise<void> {
  const [name, bootstrap, topic, partitionsText, acksFile] = process.argv.slice(2);
  const partitions = Number(partitionsText);
  const acks = fs.openSync(acksFile, 'a');
  const kafka = new Kafka({
    clientId: `chaos-${name}`, brokers: bootstrap.split(','), logLevel: logLevel.NOTHING,
    connectionTimeout: 3000, requestTimeout: 10_000, retry: { retries: 10, initialRetryTime: 100, maxRetryTime: 2000 },
  });
  let stopping = false;
  process.on('SIGTERM', () => { stopping = true; });

  let producer: Producer | null = null;
  let seq = 0;
  let acked = 0;
  let failed = 0;
  while (!stopping) {
    const partition = (seq / RECORDS_PER_SEND) % partitions;
    const first = seq;
    seq += RECORDS_PER_SEND;
    try {
      if (!producer) {
        producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
        await producer.connect();
      }
      const messages = Array.from({ length: RECORDS_PER_SEND }, (_, i) => ({ partition, value: recordValue(name, first + i) }));
      const [ack] = await producer.send({ topic, acks: -1, timeout: 10_000, messages });
      const base = Number(ack.baseOffset);
      fs.writeSync(acks, messages.map((_, i) => `${partition} ${base + i} ${name} ${first + i}\n`).join(''));
      acked += RECORDS_PER_SEND;
    } catch {
      failed += RECORDS_PER_SEND;
      const dropped = producer;
      producer = null;
      await dropped?.disconnect().catch(() => undefined);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  await producer?.disconnect().catch(() => undefined);
  fs.closeSync(acks);
  process.stdout.write(`${JSON.stringify({ acked, failed })}\n`);
}

main().catch((e) => {
  process.stderr.write(`${(e as Error).stack}\n`);
  process.exit(1);
});
