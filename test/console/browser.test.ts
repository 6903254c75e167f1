// The web console in a real browser: playwright-core driving Debian's chromium against a broker
// started here, with a topic of known messages and a consumer group that consumed part of them.
import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { Kafka, logLevel, type Consumer, type Producer } from 'kafkajs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { withBroker } from '../helpers/broker';

const CHROMIUM = process.env.FJORD_CHROMIUM ?? '/usr/bin/chromium';
const TOPIC = 'console-orders';
const GROUP = 'console-readers';
const WAIT_MS = 10000;

describe('web console in chromium', function () {
  this.timeout(60000);
  const broker = withBroker({ config: { 'http.listener': '127.0.0.1:0', 'group.initial.rebalance.delay.ms': '0' } });
  let kafka: Kafka;
  let producer: Producer;
  let browser: Browser | undefined;
  let page: Page;
  let consumed = 0;

  const produce = async (from: number, count: number) => {
    const messages = Array.from({ length: count }, (_, i) => ({ key: `key-${from + i}`, value: JSON.stringify({ order: from + i, item: 'book' }), headers: { source: 'browser-test' } }));
    await producer.send({ topic: TOPIC, messages: messages.map((m) => ({ ...m, partition: 0 })) });
  };

  /** Runs a group member until it has consumed `until` messages in all and committed them, then leaves. */
  const consumeUntil = async (until: number) => {
    const consumer: Consumer = kafka.consumer({ groupId: GROUP, sessionTimeout: 10000, heartbeatInterval: 500, maxWaitTimeInMs: 100 });
    await consumer.connect();
    await consumer.subscribe({ topic: TOPIC, fromBeginning: true });
    let done!: () => void;
    const reached = new Promise<void>((resolve) => (done = resolve));
    await consumer.run({
      autoCommit: false,
      eachMessage: async ({ topic, partition, message }) => {
        consumed++;
        await consumer.commitOffsets([{ topic, partition, offset: String(BigInt(message.offset) + 1n) }]);
        if (consumed >= until) done();
      },
    });
    await reached;
    await consumer.disconnect();
  };

  const text = (testid: string) => page.getByTestId(testid).first().textContent();
  const waitForText = (testid: string, want: string) => page.getByTestId(testid).filter({ hasText: new RegExp(`^${want}$`) }).waitFor({ timeout: WAIT_MS });
  const chartPoints = async (testid: string) => Number(await page.getByTestId(testid).getAttribute('data-points'));
  /** Waits until the chart holds more than `points` points, the last with `series` above 0 (evaluated in the page). */
  const waitForChart = (testid: string, points: number, series?: string) =>
    page.waitForFunction(`(() => {
      const el = document.querySelector('[data-testid=${testid}]');
      const last = JSON.parse(el?.getAttribute('data-last') ?? '{}');
      return Number(el?.getAttribute('data-points')) > ${points} && ${series === undefined ? 'true' : `last[${JSON.stringify(series)}] > 0`};
    })()`, null, { timeout: WAIT_MS });

  before(async function () {
    if (!existsSync(CHROMIUM)) {
      console.log(`      (skipped: no chromium at ${CHROMIUM}; install Debian's chromium package or set FJORD_CHROMIUM)`);
      this.skip();
    }
    kafka = new Kafka({ brokers: [broker.current().bootstrap], clientId: 'console-browser-test', logLevel: logLevel.NOTHING });
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: 2, replicationFactor: 1 }] });
    await admin.disconnect();
    producer = kafka.producer();
    await producer.connect();
    await produce(0, 10);
    await consumeUntil(10);
    await produce(10, 10); // the group's lag is now 10

    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: process.getuid?.() === 0 ? ['--no-sandbox'] : [] });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on('pageerror', (e) => console.log(`      page error: ${e.message}`));
  });

  after(async () => {
    await browser?.close();
    await producer?.disconnect();
  });

  const url = (hash: string) => {
    const http = broker.current().http;
    if (!http) throw new Error('the broker has no HTTP listener');
    return `http://${http.host}:${http.port}/${hash}`;
  };

  it('lists the topic and shows its partitions and offsets', async () => {
    await page.goto(url('#/topics'));
    await page.getByTestId(`topic-row-${TOPIC}`).waitFor({ timeout: WAIT_MS });
    const row = page.getByTestId(`topic-row-${TOPIC}`);
    expect(await row.locator('td').nth(1).textContent()).to.equal('2'); // partitions
    expect(await row.locator('td').nth(4).textContent()).to.equal('20'); // messages
    expect(await page.getByTestId('create-topic').count()).to.equal(0); // read-only: http.console.writes.enable is off

    await row.getByRole('link', { name: TOPIC }).click();
    await page.getByTestId('partition-row-1').waitFor({ timeout: WAIT_MS });
    expect(await text('topic-name')).to.equal(TOPIC);
    const p0 = page.getByTestId('partition-row-0').locator('td');
    expect(await p0.nth(1).textContent()).to.equal(String(broker.current().broker.nodeId)); // leader
    expect(await p0.nth(6).textContent()).to.equal('0'); // earliest
    expect(await p0.nth(7).textContent()).to.equal('20'); // latest
    expect(await page.getByTestId('partition-row-1').locator('td').nth(7).textContent()).to.equal('0');
  });

  it('browses a known message as text, JSON and hex', async () => {
    await page.getByTestId('browse-at').fill('12');
    await page.getByTestId('browse-limit').fill('3');
    await page.getByTestId('browse-submit').click();
    const message = page.getByTestId('message-12');
    await message.waitFor({ timeout: WAIT_MS });
    expect(await page.getByTestId('messages-table').locator('tbody tr').count()).to.equal(3);
    const value = JSON.stringify({ order: 12, item: 'book' });
    expect(await message.getByTestId('message-value').textContent()).to.equal(value);
    expect(await message.getByTestId('message-key').textContent()).to.equal('key-12');
    expect(await message.getByTestId('message-headers').textContent()).to.equal('source: browser-test');

    await page.getByTestId('browse-format').selectOption('json');
    expect(await message.getByTestId('message-value').textContent()).to.equal(JSON.stringify({ order: 12, item: 'book' }, null, 2));
    expect(await message.getByTestId('message-key').textContent()).to.equal('not JSON key-12');

    await page.getByTestId('browse-format').selectOption('hex');
    const bytes = Buffer.from(value).toString('hex').match(/.{2}/g)!;
    const hex = Array.from({ length: Math.ceil(bytes.length / 16) }, (_, i) => bytes.slice(i * 16, i * 16 + 16).join(' ')).join('\n'); // 16 bytes a line
    expect(await message.getByTestId('message-value').textContent()).to.equal(hex);
  });

  it("shows the group's lag going to zero as it consumes the rest, on a chart that grows", async () => {
    await page.goto(url('#/groups'));
    const row = page.getByTestId(`group-row-${GROUP}`);
    await row.waitFor({ timeout: WAIT_MS });
    expect(await row.getByTestId('group-state').textContent()).to.equal('Empty');
    expect(await row.getByTestId('group-lag').textContent()).to.equal('10');

    await row.getByRole('link', { name: GROUP }).click();
    await waitForText('group-total-lag', '10');
    expect(await page.getByTestId(`offset-row-${TOPIC}-0`).getByTestId('partition-lag').textContent()).to.equal('10');
    const chart = page.getByTestId('chart-group-lag');
    const before = await chartPoints('chart-group-lag');
    expect(before).to.be.at.least(1);
    expect(await page.locator('[data-testid=chart-group-lag] canvas').count()).to.equal(1);

    await consumeUntil(20);
    await waitForText('group-total-lag', '0');
    expect(await page.getByTestId(`offset-row-${TOPIC}-0`).getByTestId('partition-lag').textContent()).to.equal('0');
    expect(await chartPoints('chart-group-lag')).to.be.above(before);
    expect(JSON.parse((await chart.getAttribute('data-last')) ?? '{}')).to.deep.equal({ 'total lag': 0 });
  });

  it("lists the brokers and shows a broker's configs", async () => {
    const { nodeId } = broker.current().broker;
    await page.goto(url('#/brokers'));
    await page.getByTestId(`broker-row-${nodeId}`).getByRole('link', { name: String(nodeId) }).click();
    const setting = page.getByTestId('config-http.listener');
    await setting.waitFor({ timeout: WAIT_MS });
    expect(await setting.locator('td').nth(1).textContent()).to.equal('127.0.0.1:0');
    // The defaults show only when asked.
    expect(await page.getByTestId('config-num.io.threads').count()).to.equal(0);
    await page.getByTestId('broker-configs-table-show-defaults').check();
    expect(await page.getByTestId('config-num.io.threads').count()).to.equal(1);
  });

  it('draws the bytes-in rate of new traffic on the overview chart', async () => {
    await page.goto(url('#/'));
    // The first scrape only sets the baseline: a point comes with the second.
    await waitForChart('chart-bytes', 0);
    const before = await chartPoints('chart-bytes');
    await produce(20, 50);
    await waitForChart('chart-bytes', before, 'in');
    expect(await page.locator('[data-testid=chart-bytes] canvas').count()).to.equal(1);
    expect(await text('topic-count')).to.equal('1');
  });
});
