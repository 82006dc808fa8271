// A toolgate service for the chaos test, as its own process (so the test can kill -9 it): the
// database from DATABASE_URL, an OpenAI-compatible model at MODEL_BASE_URL, short recovery timings,
// and one host tool, `effect`, that writes a row the test counts (what ran, and how often) and then
// holds for `hold_ms`. It prints {"port": N} once it listens.
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { createApp } from '../../src/app/app';
import { createSequelize } from '../../src/db/connect';
import { OpenAIModel } from '../../src/llm/openai-model';
import { createLogger } from '../../src/app/logger';
import { createToolgate, internalsOf } from '../../src/toolgate';
import { defineTool } from '../../src/tools/tool-registry';

export const CHAOS_ADMIN_TOKEN = 'chaos-admin-token-0123456789';
export const CHAOS_CLIENT_TOKEN = 'chaos-client-token-0123456789';

const effect = defineTool({
  id: 'effect',
  display_name: 'Effect',
  summary: 'Writes one row the test counts, then holds.',
  input: z.strictObject({ label: z.string().max(100), hold_ms: z.number().int().min(0).max(120_000).default(0) }),
  timeoutMs: 1_000,
  async execute({ label, hold_ms }, { sequelize }) {
    await sequelize.query('INSERT INTO chaos_effects (label) VALUES (:label)', { replacements: { label } });
    await sleep(hold_ms);
    return { done: label };
  },
});

async function main(): Promise<void> {
  const sequelize = createSequelize(process.env.DATABASE_URL!, { connectTimeoutMs: 1_000, queryTimeoutMs: 2_000 });
  const tg = createToolgate({
    sequelize,
    tools: [effect],
    adminToken: CHAOS_ADMIN_TOKEN,
    clientTokens: [CHAOS_CLIENT_TOKEN],
    policyCache: 'off',
    model: new OpenAIModel({
      apiKey: 'sk-chaos',
      baseURL: process.env.MODEL_BASE_URL!,
      model: 'gpt-chaos',
      timeoutMs: 30_000,
      maxRetries: 0,
    }),
    recovery: { heartbeatMs: 200, staleAfterMs: 1_000, sweepIntervalMs: 300, graceMs: 300 },
  });
  await internalsOf(tg).instances.register();
  const app = createApp(tg, { logger: createLogger(false) });
  const server = app.listen(0, '127.0.0.1', () => {
    const address = server.address();
    process.stdout.write(`${JSON.stringify({ port: typeof address === 'object' && address ? address.port : 0 })}\n`);
  });
}

// Run as a process by the chaos test; imported for its tokens alone.
if (require.main === module) void main();
