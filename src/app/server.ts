// The service entry (`npm start`): database, migrations, system-toolkit sync, the demo scenario,
// then listen. Everything it needs comes from the environment (see src/app/config.ts).
import type { Server } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { collectDefaultMetrics } from 'prom-client';
import { createApp } from './app';
import { openService } from './bootstrap';
import { readConfig } from './config';
import { createLogger } from './logger';
import { startServiceTracing } from './tracing';
import { internalsOf } from '../toolgate';

/** How long the database's close may take once the requests have ended. */
const CLOSE_TIMEOUT_MS = 5_000;

async function main(): Promise<void> {
  const config = readConfig();
  const logger = createLogger(config.log, config.logFormat);
  // Registered before anything can start a span; only when OTEL_EXPORTER_OTLP_* names an endpoint.
  const tracing = startServiceTracing();
  if (tracing) {
    logger.info(
      { endpoint: tracing.endpoint, routing_key: config.tracing.routingKey, content: config.tracing.content },
      'exporting traces over OTLP/HTTP',
    );
  }
  const opened = await openService(config, logger, { ownSignals: true });
  const { toolgate } = opened;

  const { sync } = opened;
  logger.info(
    { created: sync.created, all_tools: sync.all_tools.member_tool_ids, stale_skipped: sync.stale_skipped },
    'system toolkits synced',
  );
  // One line on the demo: which, and why (TOOLGATE_DEMO, src/app/demo/demo-mode.ts).
  const { demo } = opened;
  logger.info(
    { demo: config.demo, active: demo.active, ...(demo.seeded.length > 0 ? { seeders: demo.seeded } : {}) },
    demo.active
      ? `demo on: ${demo.reason}${demo.seeded.length > 0 ? '; seeded The Scoop (agents Sundae and Scout; toolkits Support, Finance, Operations)' : ''}`
      : `demo off: ${demo.reason}`,
  );
  if (opened.adminTokenFile) logger.info({ file: opened.adminTokenFile }, 'no TOOLGATE_ADMIN_TOKEN set: the admin token is in this file');
  if (config.clientRoutes === 'open') {
    logger.warn(
      { allowed_hosts: config.allowedHosts },
      'no TOOLGATE_CLIENT_TOKENS set: the client routes are open (the legacy behaviour), to requests for loopback names, IP addresses and TOOLGATE_ALLOWED_HOSTS',
    );
  }
  if (!config.authservId) logger.warn('no TOOLGATE_AUTHSERV_ID set: senders are taken as given, unauthenticated (the legacy behaviour)');

  // The process's own figures (memory, event loop, GC) beside toolgate's, on the one /metrics.
  collectDefaultMetrics({ register: internalsOf(toolgate).metrics.registry });
  internalsOf(toolgate).runs.startListening();
  // Beating from the start, so the sweeper closes what a stopped instance left open even before this one holds anything.
  await internalsOf(toolgate).instances.register();
  // A shutdown takes no new requests and lets those in flight end, within a bound (SEMANTICS §13):
  // a run cut off mid-tool would leave its caller to guess whether to retry. The handlers are in
  // place before the service says it listens: a SIGTERM sent on that line would otherwise kill it
  // at once, with neither `stopping` nor `stopped`.
  let server: Server | undefined;
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal, timeout_ms: config.shutdownTimeoutMs }, 'stopping: no new requests; waiting for those in flight');
    const closed = new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    server?.closeIdleConnections();
    const drained = await toolgate.drain(config.shutdownTimeoutMs);
    server?.closeAllConnections();
    await closed;
    // Bounded as well: a close that hangs (a database that stopped answering) must not keep
    // `stopped` from the log until the process manager's kill.
    const shut = await Promise.race([opened.close().then(() => true), sleep(CLOSE_TIMEOUT_MS, false, { ref: false })]);
    // The spans of the last requests, exported before the process ends; bounded as the close is.
    if (tracing) await Promise.race([tracing.shutdown().catch(() => undefined), sleep(CLOSE_TIMEOUT_MS, undefined, { ref: false })]);
    logger.info({ signal, drained: drained.drained, cut_off: drained.left, ...(shut ? {} : { closed: false }) }, 'stopped');
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGHUP', () => void stop('SIGHUP'));
  const app = createApp(toolgate, { logger, trustProxy: config.trustProxy, dashboard: { adminToken: opened.adminToken } });
  server = await new Promise<Server>((resolve, reject) => {
    // Express 5 calls back with the error when listening fails (a port in use, say).
    const s = app.listen(config.port, config.host, (err?: NodeJS.ErrnoException) => {
      if (!err) return resolve(s);
      const why = err.code === 'EADDRINUSE' ? `${config.host}:${config.port} is already in use: set PORT to a free port` : err.message;
      void opened.close().then(() => reject(new Error(why)));
    });
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  logger.info(
    { url: `http://${config.host}:${port}`, database: opened.embedded ? 'embedded' : 'DATABASE_URL' },
    `toolgate listening on http://${config.host}:${port}`,
  );
}

main().catch((err: unknown) => {
  const message = err instanceof Error ? err.message : String(err);
  console.error(`toolgate could not start: ${message}`);
  process.exit(1);
});
