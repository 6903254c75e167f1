// The hostile side of sasl-hostile.test.ts, run as a process of its own so that its client work does
// not share the broker's event loop: keeps CONNECTIONS unauthenticated connections open against a
// SASL listener, each a third of them doing one of: SaslHandshake + SaslAuthenticate with a wrong
// password, garbage frames (junk API keys, junk bytes, oversized sizes), or nothing at all (idle,
// or a frame that never completes). A connection the broker closes is opened again at once.
// 'stop' answers with what happened: connections opened, closed by the broker, failed answers read.
import * as net from 'node:net';
import { ApiKey } from '../../src/protocol/generated';
import { RawClient } from '../helpers/raw-client';
import { plainClientMessage } from '../../src/security/plain';

const port = Number(process.argv[2]);
const CONNECTIONS = Number(process.argv[3]);

const badPassword = Buffer.concat([
  RawClient.frame(ApiKey.SaslHandshake, 1, { mechanism: 'PLAIN' }, 1),
  RawClient.frame(ApiKey.SaslAuthenticate, 2, { authBytes: plainClientMessage('alice', 'not-her-password') }, 2),
]);
const junkBody = Buffer.from('this is not a kafka request at all, just bytes');
const garbage = [
  Buffer.concat([Buffer.from([0, 0, 0, junkBody.length]), junkBody]),
  RawClient.frame(ApiKey.Metadata, 12, { topics: null, includeTopicAuthorizedOperations: false }, 3),
  Buffer.from([0x7f, 0xff, 0xff, 0xff, 1, 2, 3]),
  Buffer.from([0, 0, 0, 20, 0x40, 0x00, 0, 0, 0, 0, 0, 1]),
];
const stalled = Buffer.from([0, 0, 0, 100, 0, 17, 0, 1]);

const stats = { opened: 0, closedByBroker: 0, failedAnswers: 0 };
let stopping = false;

function open(kind: number, round: number): void {
  if (stopping) return;
  const socket = net.connect({ port, host: '127.0.0.1' });
  stats.opened++;
  socket.on('error', () => undefined);
  socket.on('connect', () => {
    if (kind === 0) socket.write(badPassword);
    else if (kind === 1) socket.write(garbage[round % garbage.length]);
    else if (round % 2 === 0) socket.write(stalled);
  });
  socket.on('data', (d: Buffer) => {
    // The handshake answer then the SASL_AUTHENTICATION_FAILED one: count the latter.
    if (kind === 0 && d.includes(Buffer.from('Invalid username or password'))) stats.failedAnswers++;
  });
  socket.on('close', () => {
    if (stopping) return;
    stats.closedByBroker++;
    setImmediate(() => open(kind, round + 1));
  });
  sockets.add(socket);
  socket.on('close', () => sockets.delete(socket));
}

const sockets = new Set<net.Socket>();
for (let i = 0; i < CONNECTIONS; i++) open(i % 3, 0);

process.on('message', () => {
  stopping = true;
  for (const s of sockets) s.destroy();
  process.send!(stats, () => process.exit(0));
});
