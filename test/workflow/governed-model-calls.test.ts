import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { defineAgent } from '../../src/agents/define-agent';
import { sendMessage } from '../../src/client/conversations';
import { readTenantUsage, setTenantBudget } from '../../src/client/tenants';
import { rateGovernorId, rateGovernorQuery } from '../../src/contracts/rate-governor';
import type { ChatRequest } from '../../src/testing/chat-request';
import { answer, startModel } from '../helpers/scripted-model';
import type { OpenAICompatibleServer } from '../../src/testing/openai-compatible-server';
import { createTestWorker, useTestTemporal } from '../helpers/temporal';
import type { Embedder } from '../../src/memory-store/memory-store';

/**
 * Every model request the runtime makes goes through one governed seam (activities/model-gate.ts):
 * a compaction's summary and a memory extraction reserve in the tenant's ledger, take their turn
 * from the model's rate governor and are charged, exactly as an agent's step is; so a budget is
 * passed by at most one call, whatever asked for it.
 */
const temporal = useTestTemporal();
const dir = mkdtempSync(join(tmpdir(), 'governed-'));

const isSummary = (req: ChatRequest) =>
  req.messages.length === 1 && String(req.messages[0].content).startsWith('Summarise the conversation below');
const isExtraction = (req: ChatRequest) =>
  String(req.messages[0]?.content ?? '').startsWith('You keep the long-term memory');

function script(req: ChatRequest) {
  if (isSummary(req)) return answer('The user sent long messages about topic A.');
  if (isExtraction(req)) return answer('{"add":[],"update":[],"retire":[]}');
  return answer('Noted.');
}

const keeper = defineAgent({ name: 'keeper', instructions: 'Take notes.', tools: [], memory: { extract: true } });

/**
 * A scripted model, a worker whose model has a name of this test's own (its rate governor is this
 * test's alone), with memory, and a tenant with `budget` (so every call reserves: a tenant without
 * one skips the reservation); `body` runs while the worker does (the ledger is read through it).
 */
async function withTenant(
  budget: number,
  body: (t: {
    client: ReturnType<typeof temporal>['client'];
    model: OpenAICompatibleServer;
    tenant: string;
    name: string;
    taskQueue: string;
  }) => Promise<void>,
  /** Recall by meaning with this embedder (its model limited too). */
  embeddings?: Embedder,
): Promise<void> {
  const model = await startModel(script);
  const name = `gov-${randomUUID().slice(0, 8)}`;
  const tenant = `t-${name}`;
  const { client } = temporal();
  const { worker, taskQueue } = await createTestWorker(temporal(), {
    baseURL: model.baseURL,
    model: { model: name },
    agents: [keeper],
    memory: { dir: join(dir, name), ...(embeddings ? { embeddings } : {}) },
    rateLimits: {
      [name]: { requestsPerMinute: 60_000 },
      ...(embeddings ? { [embeddings.model]: { requestsPerMinute: 60_000 } } : {}),
    },
  });
  await worker.runUntil(async () => {
    await setTenantBudget(client, tenant, { tokens: budget, per: 'day' });
    await body({ client, model, tenant, name, taskQueue });
  });
}

it('reserves, governs and charges a tenant’s summaries and extractions as it does its agent steps', async () => {
  await withTenant(10_000_000, async ({ client, model, tenant, name, taskQueue }) => {
    const id = `governed-${randomUUID()}`;
    for (let turn = 1; turn <= 4; turn++) {
      const message = `Message ${turn}: ${'lorem ipsum dolor sit amet '.repeat(60)}`;
      const options = { agent: 'keeper', user: 'dana', tenant, maxPromptTokens: 1_200 };
      expect(await sendMessage(client, id, { message }, { taskQueue, options })).toMatchObject({ status: 'completed' });
    }
    const asked = model.requests.length;
    expect(model.requests.filter(isSummary).length).toBeGreaterThanOrEqual(1);
    // One extraction a turn (more when an attempt was retried after its reply: each reply is charged).
    expect(model.requests.filter(isExtraction).length).toBeGreaterThanOrEqual(4);
    // Every request was charged to the tenant, and nothing is left held: each one reserved first.
    const usage = await readTenantUsage(client, tenant);
    expect(usage).toMatchObject({ spent: { calls: asked }, held: { tokens: 0 } });
    // Every request took its turn from the model's governor (an attempt that failed before it
    // asked, on a busy machine, took one too: its retry takes another).
    const governor = await client.workflow.getHandle(rateGovernorId(name)).query(rateGovernorQuery);
    expect(governor.counts.granted).toBeGreaterThanOrEqual(asked);
  });
});

it('refuses a tenant’s extraction once its budget is spent, as it would the next step: the budget is passed by one call', async () => {
  // 400 tokens: the first step is admitted (nothing spent yet) and spends more than that.
  await withTenant(400, async ({ client, model, tenant, taskQueue }) => {
    const message = `Remember this: ${'lorem ipsum dolor sit amet '.repeat(60)}`;
    const options = { agent: 'keeper', user: 'dana', tenant };
    const sent = await sendMessage(client, `governed-${randomUUID()}`, { message }, { taskQueue, options });
    // The turn answered; its extraction, refused by the ledger, never asked the model (memory never fails a turn).
    expect(sent).toMatchObject({ status: 'completed', content: 'Noted.' });
    expect(model.requests.filter(isExtraction)).toHaveLength(0);
    expect((await readTenantUsage(client, tenant))?.spent.calls).toBe(1);
  });
});

it('reserves, governs and charges the embeddings of a tenant’s memory (recall by meaning) as it does its model calls', async () => {
  const embedded: string[][] = [];
  const name = `embed-${randomUUID().slice(0, 8)}`;
  const embedder: Embedder = {
    model: name,
    embed: async (texts) => {
      embedded.push(texts);
      return texts.map((t) => [t.length % 7, 1, 2]);
    },
  };
  await withTenant(
    10_000_000,
    async ({ client, model, tenant, taskQueue }) => {
      const id = `governed-embed-${randomUUID()}`;
      const options = { agent: 'keeper', user: 'dana', tenant };
      for (const message of ['I like tea.', 'What do I like?'])
        expect(await sendMessage(client, id, { message }, { taskQueue, options })).toMatchObject({
          status: 'completed',
        });
      // The turn's recall and the extraction's look-up embedded their queries.
      expect(embedded.length).toBeGreaterThanOrEqual(2);
      // Each embeddings request was charged to the tenant beside the model calls, nothing left held.
      const usage = await readTenantUsage(client, tenant);
      expect(usage).toMatchObject({ spent: { calls: model.requests.length + embedded.length }, held: { tokens: 0 } });
      // And took its turn from the embeddings model's own governor.
      const governor = await client.workflow.getHandle(rateGovernorId(name)).query(rateGovernorQuery);
      expect(governor.counts.granted).toBeGreaterThanOrEqual(embedded.length);
    },
    embedder,
  );
});
