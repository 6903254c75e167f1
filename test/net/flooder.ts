// The flooding client of flood.test.ts, run as a process of its own: pipelines ApiVersions and
// Metadata requests as fast as the broker takes them, discards the answers (counting their size
// prefixes). The test sends 'pause' and 'flood' to alternate quiet and flooded phases, and 'stop'
// to get the number of answers.
import * as net from 'node:net';
import { ApiKey } from '../../src/protocol/generated';
import { RawClient } from '../helpers/raw-client';

const port = Number(process.argv[2]);
const burst = Buffer.concat(Array.from({ length: 200 }, (_, i) => i % 2 === 0
  ? RawClient.frame(ApiKey.ApiVersions, 3, { clientSoftwareName: 'flooder', clientSoftwareVersion: '1' }, i)
  : RawClient.frame(ApiKey.Metadata, 12, { topics: null, includeTopicAuthorizedOperations: false }, i)));

let answered = 0;
let pending: Buffer = Buffer.alloc(0);
const socket = net.connect({ port, host: '127.0.0.1' }, send);
socket.on('error', () => undefined);
socket.on('data', (d: Buffer) => {
  pending = pending.length > 0 ? Buffer.concat([pending, d]) : d;
  let at = 0;
  while (pending.length - at >= 4 && pending.length - at >= 4 + pending.readInt32BE(at)) {
    at += 4 + pending.readInt32BE(at);
    answered++;
  }
  pending = pending.subarray(at);
});

let flooding = true;
function send(): void {
  while (flooding && socket.write(burst));
  if (flooding) socket.once('drain', send);
}

process.on('message', (m) => {
  if (m === 'pause') flooding = false;
  else if (m === 'flood') {
    flooding = true;
    send();
  } else process.send!(answered, () => process.exit(0));
});
