// A TCP proxy for tests, in front of one server on loopback: requests go through untouched, and what the
// server sends back is delivered as the proxy's `mode` says: as it comes, byte by byte (every frame
// split at every boundary, size prefix included), held back and coalesced into one write, or dropped.
// The mode can change while connections are open. `cut` stands for a network partition: nothing
// moves either way (the sockets are paused, so the bytes wait in the kernel's buffers as TCP
// retransmits would) until it is lifted, when everything held is delivered; new connections wait too.
import * as net from 'node:net';

export type DeliveryMode = 'passthrough' | 'byte-by-byte' | 'coalesce' | 'blackhole';

export interface TcpProxy {
  readonly port: number;
  mode: DeliveryMode;
  /** True: no bytes pass either way, on open connections or new ones, until set back to false. */
  cut: boolean;
  /** Client-side sockets closed so far (by the client or the proxy). */
  readonly clientsClosed: number;
  close(): Promise<void>;
}

/** How long 'coalesce' holds the server's bytes before writing them all at once. */
const COALESCE_MS = 50;

export async function startTcpProxy(targetPort: number, mode: DeliveryMode = 'passthrough'): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  let clientsClosed = 0;
  let cut = false;
  const server = net.createServer((client) => {
    const upstream = net.connect({ host: '127.0.0.1', port: targetPort });
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.setNoDelay(true);
      s.on('error', () => undefined);
      s.on('close', () => sockets.delete(s));
      if (cut) s.pause();
    }
    client.on('close', () => {
      clientsClosed++;
      upstream.destroy();
    });
    upstream.on('close', () => client.destroy());
    client.on('data', (bytes) => upstream.write(bytes));
    const deliver = downstream(client);
    upstream.on('data', (bytes) => deliver(proxy.mode, bytes));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const proxy: TcpProxy = {
    port: (server.address() as net.AddressInfo).port,
    mode,
    get cut() { return cut; },
    set cut(value: boolean) {
      cut = value;
      for (const s of sockets) if (value) s.pause(); else s.resume();
    },
    get clientsClosed() { return clientsClosed; },
    close: () => new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    }),
  };
  return proxy;
}

/** Writes the server's bytes to the client in the given mode, keeping their order across modes. */
function downstream(client: net.Socket): (mode: DeliveryMode, bytes: Buffer) => void {
  let held = Buffer.alloc(0);
  let flushing = false;
  const byteByByte = (): void => {
    if (held.length === 0 || client.destroyed) {
      flushing = false;
      return;
    }
    client.write(held.subarray(0, 1));
    held = held.subarray(1);
    setImmediate(byteByByte); // a turn of the event loop between bytes: the client reads each alone
  };
  const coalesced = (): void => {
    flushing = false;
    if (!client.destroyed) client.write(held);
    held = Buffer.alloc(0);
  };
  return (mode, bytes) => {
    if (mode === 'blackhole') return;
    if (mode === 'passthrough' && !flushing) {
      client.write(bytes);
      return;
    }
    held = Buffer.concat([held, bytes]);
    if (flushing) return;
    flushing = true;
    if (mode === 'coalesce') setTimeout(coalesced, COALESCE_MS);
    else byteByByte();
  };
}
