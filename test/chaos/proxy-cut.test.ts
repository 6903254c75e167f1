// The test proxy's `cut` (test/helpers/tcp-proxy.ts), which the chaos runner uses to cut a broker
// off: while cut, no byte passes either way on an open connection or a new one; once healed,
// what was held arrives, in order, on the same connections.
import { expect } from 'chai';
import * as net from 'node:net';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy';

describe('the test proxy cut', () => {
  let server: net.Server;
  let proxy: TcpProxy;
  const received: string[] = [];

  before(async () => {
    // The server records what it gets and echoes it back.
    server = net.createServer((s) => s.on('data', (b) => { received.push(b.toString()); s.write(b); }));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    proxy = await startTcpProxy((server.address() as net.AddressInfo).port);
  });

  after(async () => {
    await proxy.close();
    await new Promise((resolve) => server.close(resolve));
  });

  /** A client through the proxy, with everything it has read so far. */
  async function connect(): Promise<{ socket: net.Socket; read: () => string }> {
    let read = '';
    const socket = net.connect({ host: '127.0.0.1', port: proxy.port });
    socket.on('data', (b) => { read += b.toString(); });
    await new Promise((resolve) => socket.once('connect', resolve));
    return { socket, read: () => read };
  }

  const settle = () => new Promise((r) => setTimeout(r, 200));

  it('holds both ways while cut, on open and new connections, and delivers in order once healed', async () => {
    const open = await connect();
    open.socket.write('before;');
    await settle();
    expect(open.read()).to.equal('before;');

    proxy.cut = true;
    open.socket.write('during;');
    const fresh = await connect();
    fresh.socket.write('new;');
    await settle();
    expect(received.join('')).to.equal('before;');
    expect(open.read()).to.equal('before;');
    expect(fresh.read()).to.equal('');

    proxy.cut = false;
    await settle();
    expect(received.join('')).to.have.length('before;during;new;'.length).and.include('during;').and.include('new;');
    expect(open.read()).to.equal('before;during;');
    expect(fresh.read()).to.equal('new;');
    open.socket.destroy();
    fresh.socket.destroy();
  });
});
