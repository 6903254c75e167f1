// Broker memory under hostile partial frames (issue 11, item 8): `--connections` peers each send a
// 40 MB size prefix and `--body-mb` MB of the body, then close. Samples the broker's RSS (/proc)
// while they send and after they are gone, and checks it still answers.
// Run: npm run build && node dist/bench/hostile-frames.js [--connections 20] [--body-mb 30]
// [--fjord path/to/bin/fjord] [--set key=value] (e.g. queued.max.request.bytes).
import * as net from 'node:net';
import { arg, startFjord } from './fjord-process';

const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function main(): Promise<void> {
  const connections = Number(arg('connections', '20'));
  const bodyBytes = Number(arg('body-mb', '30')) * 1024 * 1024;
  const sets = process.argv.flatMap((a, i) => (process.argv[i - 1] === '--set' ? [a] : []));
  const broker = await startFjord(arg('fjord', '') || undefined, sets);
  const { port } = broker;
  console.log(`idle: ${JSON.stringify(broker.memoryMb())} MB`);

  let peak = 0;
  const sampler = setInterval(() => (peak = Math.max(peak, broker.memoryMb().rss)), 50);
  const prefix = Buffer.alloc(4);
  prefix.writeInt32BE(40 * 1024 * 1024);
  const chunk = Buffer.alloc(1 << 20, 1);
  const sockets = await Promise.all(Array.from({ length: connections }, () => new Promise<net.Socket>((resolve) => {
    const s = net.connect({ port, host: '127.0.0.1' }, () => resolve(s));
    s.on('error', () => undefined);
  })));
  // A peer the broker stops reading from (queued.max.request.bytes) gives up after 10 s.
  let accepted = 0;
  const deadline = tick(10_000);
  await Promise.all(sockets.map(async (s) => {
    s.write(prefix);
    for (let sent = 0; sent < bodyBytes; sent += chunk.length) {
      if (!s.write(chunk) && await Promise.race([new Promise((r) => s.once('drain', () => r(false))), deadline.then(() => true)])) return;
    }
    accepted++;
  }));
  await tick(500);
  const whileOpen = broker.memoryMb().rss;
  for (const s of sockets) s.destroy();
  await tick(3000);
  clearInterval(sampler);
  const after = broker.memoryMb();

  // Still serving: an ApiVersions v0 round trip.
  const answered = await new Promise<boolean>((resolve) => {
    const s = net.connect({ port, host: '127.0.0.1' }, () => s.write(Buffer.from([0, 0, 0, 10, 0, 18, 0, 0, 0, 0, 0, 1, 0xff, 0xff])));
    s.once('data', () => { s.destroy(); resolve(true); });
    s.once('error', () => resolve(false));
  });
  console.log(`${connections} x (40 MB prefix + ${bodyBytes / 1048576} MB), ${accepted} sent in full: peak RSS ${peak} MB, with them open ${whileOpen} MB, ` +
    `3 s after they closed ${after.rss} MB (VmHWM ${after.hwm} MB); still answering: ${answered}`);
  await broker.stop();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
