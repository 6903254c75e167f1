// Takes the README's screenshot of the web console (docs/console.png): a broker with some traffic
// and a consumer group behind, the overview page after its charts drew a few points.
// Usage: npm run build && node scripts/console-screenshot.js [out.png] [#/route]
const path = require('node:path');
const { chromium } = require('playwright-core');
const { Kafka, logLevel } = require('kafkajs');
const { startBroker } = require('../dist/src/broker');

const CHROMIUM = process.env.FJORD_CHROMIUM ?? '/usr/bin/chromium';
const out = process.argv[2] ?? path.join(__dirname, '..', 'docs', 'console.png');
const route = process.argv[3] ?? '#/';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function main() {
  const running = await startBroker({ logLevel: 'silent', config: { 'http.listener': '127.0.0.1:0' } });
  const kafka = new Kafka({ brokers: [running.bootstrap], clientId: 'console-screenshot', logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: 'orders', numPartitions: 3 }, { topic: 'payments', numPartitions: 2 }] });
  await admin.disconnect();
  const producer = kafka.producer();
  await producer.connect();
  let n = 0;
  const send = async (count) => {
    const messages = Array.from({ length: count }, () => ({ key: `customer-${n % 17}`, value: JSON.stringify({ order: n++, amount: (n * 7.3) % 100, currency: 'EUR' }) }));
    await producer.send({ topic: 'orders', messages });
    await producer.send({ topic: 'payments', messages: messages.slice(0, count / 2) });
  };
  await send(200);
  // A group that read part of the topic, so the lag chart has something to show.
  const consumer = kafka.consumer({ groupId: 'billing', maxWaitTimeInMs: 100 });
  await consumer.connect();
  await consumer.subscribe({ topic: 'orders', fromBeginning: true });
  let read = 0;
  await consumer.run({ eachMessage: async () => void read++ });
  while (read < 100) await sleep(50);
  await consumer.disconnect();
  // And one that keeps up, so that bytes go out and fetches take time.
  const live = kafka.consumer({ groupId: 'audit', maxWaitTimeInMs: 500 });
  await live.connect();
  await live.subscribe({ topic: 'payments', fromBeginning: true });
  await live.run({ eachMessage: async () => {} });

  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: process.getuid?.() === 0 ? ['--no-sandbox'] : [] });
  const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
  await page.goto(`http://${running.http.host}:${running.http.port}/${route}`);
  // Traffic of varying rate while the charts draw their points (one per 2 s).
  for (let i = 0; i < 12; i++) {
    await send(20 + ((i * 37) % 90));
    await sleep(1000);
  }
  await page.screenshot({ path: out, fullPage: true });
  console.log(`wrote ${out}`);
  await browser.close();
  await live.disconnect();
  await producer.disconnect();
  await running.close();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
