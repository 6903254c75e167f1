// Real client requests for the fuzzer to mutate: a TCP proxy in front of the broker keeps every
// request frame kafkajs sends while it administers topics, produces (plain, gzip, idempotent,
// transactional), and consumes in a group. The broker must advertise the proxy's port, so that
// kafkajs's connections to "the broker" also go through it.
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { Kafka, logLevel, CompressionTypes } from 'kafkajs';

export interface CapturingProxy {
  port: number;
  /** Request frames seen so far, without their size prefix. */
  frames: Buffer[];
  close(): Promise<void>;
}

/** Listens on a free port; forwards each connection to `target()` and keeps the client's frames. */
export async function startCapturingProxy(target: () => number, host = '127.0.0.1'): Promise<CapturingProxy> {
  const frames: Buffer[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect({ port: target(), host });
    sockets.add(client).add(upstream);
    let pending = Buffer.alloc(0);
    client.on('data', (d) => {
      upstream.write(d);
      pending = Buffer.concat([pending, d]);
      while (pending.length >= 4 && pending.length >= 4 + pending.readInt32BE(0)) {
        const size = pending.readInt32BE(0);
        frames.push(Buffer.from(pending.subarray(4, 4 + size)));
        pending = pending.subarray(4 + size);
      }
    });
    upstream.on('data', (d) => client.write(d));
    const end = (): void => { client.destroy(); upstream.destroy(); };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    frames,
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** Drives kafkajs through most of what a client does, against `bootstrap` (the proxy). */
export async function runClientWorkload(bootstrap: string): Promise<void> {
  const kafka = new Kafka({ brokers: [bootstrap], clientId: 'fuzz-capture', logLevel: logLevel.NOTHING, retry: { retries: 3 } });
  const topic = 'capture-topic';
  const admin = kafka.admin();
  await admin.connect();
  try {
    await admin.createTopics({ topics: [{ topic, numPartitions: 2 }] });
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    await producer.send({ topic, messages: [{ key: 'k1', value: 'v1', headers: { h: 'x' } }, { value: 'v2' }] });
    await producer.send({ topic, compression: CompressionTypes.GZIP, messages: [{ key: 'k2', value: 'zipped' }] });
    await producer.disconnect();

    const txn = kafka.producer({ transactionalId: 'capture-txn', idempotent: true, maxInFlightRequests: 1 });
    await txn.connect();
    const t = await txn.transaction();
    await t.send({ topic, messages: [{ key: 'k3', value: 'in a transaction' }] });
    await t.sendOffsets({ consumerGroupId: 'capture-group', topics: [{ topic, partitions: [{ partition: 0, offset: '1' }] }] });
    await t.commit();
    await txn.disconnect();

    const consumer = kafka.consumer({ groupId: 'capture-group', sessionTimeout: 6000, heartbeatInterval: 500 });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    let seen = 0;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('capture consumer got nothing in 15 s')), 15_000);
      consumer.run({
        eachMessage: async () => {
          if (++seen >= 2) {
            clearTimeout(timer);
            resolve();
          }
        },
      }).catch(reject);
    });
    await consumer.disconnect();

    await admin.fetchTopicOffsets(topic);
    await admin.fetchOffsets({ groupId: 'capture-group', topics: [topic] });
    await admin.describeGroups(['capture-group']);
    await admin.listGroups();
    await admin.describeCluster();
    await admin.createPartitions({ topicPartitions: [{ topic, count: 3 }] });
    await admin.deleteTopicRecords({ topic, partitions: [{ partition: 0, offset: '1' }] });
    await admin.deleteGroups(['capture-group']);
    await admin.deleteTopics({ topics: [topic] });
  } finally {
    await admin.disconnect();
  }
}

/** The request frames of every client in test/protocol/golden (admin APIs of six clients). */
export function goldenRequests(): Buffer[] {
  const dir = path.resolve(__dirname, '../../../test/protocol/golden');
  const index = JSON.parse(fs.readFileSync(path.join(dir, 'index.json'), 'utf8')) as { fixtures: { request: string }[] };
  return index.fixtures.map((f) => Buffer.from(fs.readFileSync(path.join(dir, f.request), 'utf8').trim(), 'hex'));
}
