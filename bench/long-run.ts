/**
 * A one-shot run of 300 steps whose tool returns 100 KB each time (30 MB of tool output in one
 * run), with memory by tokens: whether it completes, how long it takes, how large its history
 * grows, and how large the largest request was. Tool outputs over the payload threshold go to the
 * payload store; the model sees bounded views and summaries.
 *
 * Run alone with `node --import tsx bench/long-run.ts`; `npm run bench` runs it too.
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { runOutcome, startAgentRun } from '../src/client/run-agent';
import { connectTemporal } from '../src/connection/temporal-env';
import { clientSettings } from '../src/connection/settings';
import { startOpenAICompatibleServer } from '../src/testing/openai-compatible-server';
import { createAgentWorker } from '../src/worker/create-agent-worker';
import { installRuntimeLogging } from '../src/telemetry/logging';
import { defineTool } from '../src/tools/define-tool';

const STEPS = Number(process.env.BENCH_LONG_RUN_STEPS ?? 300);
const PAGE = 'x'.repeat(100 * 1024);

/** Runs it and prints one line. */
export async function longRun(): Promise<void> {
  installRuntimeLogging('ERROR');
  let largest = 0;
  let calls = 0;
  const model = await startOpenAICompatibleServer((req) => {
    if (String(req.messages[0]?.content).startsWith('Summarise the conversation'))
      return { content: 'Pages were read, one after another.' };
    calls++;
    largest = Math.max(largest, Math.ceil(JSON.stringify(req.messages).length / 4));
    return calls < STEPS
      ? { toolCalls: [{ name: 'read_page', arguments: { page: calls } }] }
      : { content: `Read ${STEPS - 1} pages.` };
  });
  const readPage = defineTool({
    name: 'read_page',
    description: 'Reads a page',
    parameters: z.object({ page: z.number() }),
    execute: async ({ page }) => `page ${page}\n${PAGE}`,
  });
  const temporal = await connectTemporal(
    { port: 0, persistent: false },
    clientSettings({ ...process.env, TEMPORAL_ADDRESS: '' }),
  );
  const taskQueue = `long-run-${randomUUID()}`;
  const worker = await createAgentWorker({
    connection: temporal.nativeConnection,
    taskQueue,
    registry: [readPage],
    model: { baseURL: model.baseURL, apiKey: 'local', model: 'echo', requestTimeoutMs: 30_000, configured: true },
  });
  const started = performance.now();
  try {
    await worker.runUntil(async () => {
      const handle = await startAgentRun(
        temporal.client,
        { message: 'Read every page.', maxIterations: STEPS, maxPromptTokens: 8_000 },
        { taskQueue },
      );
      const outcome = await runOutcome(handle);
      // Every workflow run of it: a long run continues as new when Temporal suggests it.
      let bytes = 0;
      let events = 0;
      let runs = 0;
      for await (const r of temporal.client.workflow.list({ query: `WorkflowId = '${handle.workflowId}'` })) {
        const history = await temporal.client.workflow.getHandle(handle.workflowId, r.runId).fetchHistory();
        bytes += Buffer.byteLength(JSON.stringify(history));
        events += history.events?.length ?? 0;
        runs++;
      }
      console.log('');
      console.log(
        `Long run: ${STEPS} steps, a 100 KB tool output each: ${outcome.status} in ${((performance.now() - started) / 1000).toFixed(1)} s (${((performance.now() - started) / STEPS).toFixed(0)} ms a step), history ${(bytes / 1024 / 1024).toFixed(1)} MB in ${events} events over ${runs} workflow run(s), largest request ${largest} tokens (maxPromptTokens 8,000)`,
      );
    });
  } finally {
    await temporal.close();
    await model.close();
  }
}

if (require.main === module)
  longRun().catch((err) => {
    console.error(err);
    process.exit(1);
  });
