// A TCP proxy in front of PostgreSQL that can freeze: while frozen it accepts connections and reads
// nothing, forwards nothing and answers nothing, as a database host that stopped (SIGSTOP, a full
// disk, a stuck hypervisor) without closing a single connection. Thawed, it forwards again.
import net from 'node:net';

export interface FreezableProxy {
  readonly port: number;
  /** The same URL, through the proxy. */
  url(databaseUrl: string): string;
  freeze(): void;
  thaw(): void;
  close(): Promise<void>;
}

export async function startFreezableProxy(target: { host: string; port: number }): Promise<FreezableProxy> {
  let frozen = false;
  const pairs = new Set<[net.Socket, net.Socket]>();
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    const pair: [net.Socket, net.Socket] = [client, upstream];
    pairs.add(pair);
    for (const [from, to] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      // By hand rather than pipe(): pipe() resumes a paused source on drain, which would thaw it.
      from.on('data', (chunk) => {
        if (!to.write(chunk)) from.pause();
      });
      to.on('drain', () => {
        if (!frozen) from.resume();
      });
      from.on('error', () => to.destroy());
      from.on('close', () => {
        to.destroy();
        pairs.delete(pair);
      });
    }
    if (frozen) for (const socket of pair) socket.pause();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    url: (databaseUrl) => {
      const u = new URL(databaseUrl);
      u.hostname = '127.0.0.1';
      u.port = String(port);
      return u.toString();
    },
    freeze: () => {
      frozen = true;
      for (const pair of pairs) for (const socket of pair) socket.pause();
    },
    thaw: () => {
      frozen = false;
      for (const pair of pairs) for (const socket of pair) socket.resume();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const pair of pairs) for (const socket of pair) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
