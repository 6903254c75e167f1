// Hostile input against a SASL listener (issue 16): 1,000 unauthenticated connections hammer it
// (wrong passwords, garbage frames, idle and stalled sockets, each reopened as soon as the broker
// closes it) from another process, while an authenticated bystander produces one record at a time.
// The bystander must keep working with a bounded p99: every send succeeds, and the p99 under attack
// stays under 300 ms plus 5x its quiet p99 (the machine is shared: its noise falls on both). Measured
// on a 2-core machine: quiet p50/p99 0.8/6.5 ms, under attack 2.0/32.6 ms (and 1.4/19.9 vs 2.8/111.4 ms
// on a busier run). The numbers are printed at each run.
import { expect } from 'chai';
import { fork } from 'node:child_process';
import * as path from 'node:path';
import { Kafka, logLevel, type Producer } from 'kafkajs';
import { withBroker } from '../helpers/broker';

const CONNECTIONS = 1000;
const SAMPLES = 200;

async function sendTimes(producer: Producer): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const started = process.hrtime.bigint();
    await producer.send({ topic: 'bystander', acks: 1, messages: [{ value: `record ${i}` }] });
    times.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  return times;
}

const percentile = (times: number[], p: number) => [...times].sort((a, b) => a - b)[Math.floor(times.length * p)];

describe(`SASL listener under ${CONNECTIONS} hostile unauthenticated connections`, function () {
  this.timeout(120_000);
  const broker = withBroker({
    config: {
      listeners: 'SASL_PLAINTEXT://127.0.0.1:0',
      'sasl.enabled.mechanisms': 'PLAIN',
      'listener.name.sasl_plaintext.plain.sasl.jaas.config':
        'org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret" user_bystander="b-secret";',
      // Idle and stalled sockets are cut after 3 s (min(connections.max.idle.ms, 30 s)) and reopened.
      'connections.max.idle.ms': '3000',
    },
  });

  it('keeps an authenticated producer working with a bounded p99', async () => {
    const producer = new Kafka({
      clientId: 'bystander', brokers: [broker.current().bootstrap], logLevel: logLevel.NOTHING,
      sasl: { mechanism: 'plain', username: 'bystander', password: 'b-secret' },
    }).producer();
    await producer.connect();
    await sendTimes(producer); // warm-up: the topic is created, the connection is up
    const quiet = await sendTimes(producer);

    const attacker = fork(path.join(__dirname, 'sasl-attacker.js'), [String(broker.current().port), String(CONNECTIONS)],
      { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    let attacked: number[];
    let stats: { opened: number; closedByBroker: number; failedAnswers: number };
    try {
      await new Promise((r) => setTimeout(r, 1500));
      attacked = [...await sendTimes(producer), ...await sendTimes(producer)];
      const answered = new Promise<typeof stats>((resolve) => attacker.once('message', (m) => resolve(m as typeof stats)));
      attacker.send('stop');
      stats = await answered;
    } finally {
      attacker.kill();
      await producer.disconnect();
    }
    const summary = `quiet p50/p99 ${percentile(quiet, 0.5).toFixed(1)}/${percentile(quiet, 0.99).toFixed(1)} ms, ` +
      `under attack ${percentile(attacked, 0.5).toFixed(1)}/${percentile(attacked, 0.99).toFixed(1)} ms; ` +
      `attacker opened ${stats.opened} connections, ${stats.closedByBroker} closed by the broker, ${stats.failedAnswers} SASL_AUTHENTICATION_FAILED answers`;
    console.log(`      ${summary}`);
    expect(stats.opened, 'the attack ran').to.be.at.least(CONNECTIONS);
    expect(stats.failedAnswers, 'wrong passwords were answered, not served').to.be.above(100);
    expect(percentile(attacked, 0.99), summary).to.be.at.most(300 + 5 * percentile(quiet, 0.99));
  });
});
