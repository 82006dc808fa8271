// The MCP client's fetch: one listener on the connection's shared signal per request in flight, and
// none once its answer is read, so a long-lived connection never trips Node's leak warning; closing
// (aborting the shared signal) still aborts a request in flight.
import { getEventListeners } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ownSignalFetch } from '../../../src/mcp/own-signal-fetch';

let server: Server;
let url: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/hang') return; // never answers
    res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"ok":true}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

test('when many requests share one signal and each answer is read, then no listener is left on it', async () => {
  const shared = new AbortController();
  for (let i = 0; i < 50; i++) {
    const res = await ownSignalFetch(`${url}/ok`, { signal: shared.signal });
    expect(await res.json()).toEqual({ ok: true });
  }
  await new Promise((resolve) => setImmediate(resolve));
  expect(getEventListeners(shared.signal, 'abort')).toHaveLength(0);
});

test('when the shared signal aborts, then a request in flight is aborted', async () => {
  const shared = new AbortController();
  const pending = ownSignalFetch(`${url}/hang`, { signal: shared.signal });
  await new Promise((resolve) => setTimeout(resolve, 50));
  expect(getEventListeners(shared.signal, 'abort')).toHaveLength(1);
  shared.abort();
  await expect(pending).rejects.toThrow();
});
