/**
 * A one-shot run of 5,000 steps (BENCH_MANY_STEPS) with small tool outputs, on a server with
 * Temporal's default limits: it continues as new when Temporal suggests it, so each of its
 * workflow runs' histories stays under the warning thresholds (10,240 events, 10 MB), and every
 * step stays readable: the result has every tool output (from every run's history) and the
 * transcript every message. Prints one line.
 *
 * Run alone with `node --import tsx bench/many-steps.ts`; `npm run bench` runs it too.
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { readTranscript } from '../src/client/workflow-controls';
import { runOutcome, startAgentRun } from '../src/client/run-agent';
import { connectTemporal } from '../src/connection/temporal-env';
import { clientSettings } from '../src/connection/settings';
import { startOpenAICompatibleServer } from '../src/testing/openai-compatible-server';
import { createAgentWorker } from '../src/worker/create-agent-worker';
import { installRuntimeLogging } from '../src/telemetry/logging';
import { defineTool } from '../src/tools/define-tool';

const STEPS = Number(process.env.BENCH_MANY_STEPS ?? 5_000);
/** Temporal's warning thresholds for one history. */
const WARN_EVENTS = 10_240;
const WARN_BYTES = 10 * 1024 * 1024;

/** Runs it and prints one line. */
export async function manySteps(): Promise<void> {
  installRuntimeLogging('ERROR');
  let calls = 0;
  const model = await startOpenAICompatibleServer((req) => {
    if (String(req.messages[0]?.content).startsWith('Summarise the conversation'))
      return { content: 'Numbers were counted, one after another.' };
    calls++;
    return calls < STEPS ? { toolCalls: [{ name: 'count', arguments: { n: calls } }] } : { content: `Counted.` };
  });
  const count = defineTool({
    name: 'count',
    description: 'Counts a number',
    parameters: z.object({ n: z.number() }),
    execute: async ({ n }) => `counted ${n}`,
    local: true,
  });
  const temporal = await connectTemporal(
    { port: 0, persistent: false },
    clientSettings({ ...process.env, TEMPORAL_ADDRESS: '' }),
  );
  const taskQueue = `many-steps-${randomUUID()}`;
  const worker = await createAgentWorker({
    connection: temporal.nativeConnection,
    taskQueue,
    registry: [count],
    model: { baseURL: model.baseURL, apiKey: 'local', model: 'echo', requestTimeoutMs: 30_000, configured: true },
  });
  const started = performance.now();
  try {
    await worker.runUntil(async () => {
      const handle = await startAgentRun(
        temporal.client,
        { message: 'Count.', maxIterations: STEPS + 1, maxPromptTokens: 8_000 },
        { taskQueue },
      );
      const outcome = await runOutcome(handle);
      const seconds = (performance.now() - started) / 1000;
      let runs = 0;
      let maxEvents = 0;
      let maxBytes = 0;
      for await (const r of temporal.client.workflow.list({ query: `WorkflowId = '${handle.workflowId}'` })) {
        const history = await temporal.client.workflow.getHandle(handle.workflowId, r.runId).fetchHistory();
        runs++;
        maxEvents = Math.max(maxEvents, history.events?.length ?? 0);
        maxBytes = Math.max(maxBytes, Buffer.byteLength(JSON.stringify(history)));
      }
      const readable = outcome.toolExecutions.filter((e, i) => e.result === `counted ${i + 1}`).length;
      const transcript = await readTranscript(temporal.client, handle.workflowId);
      const under = maxEvents < WARN_EVENTS && maxBytes < WARN_BYTES ? 'under' : 'OVER';
      console.log('');
      console.log(
        `Many steps: a ${STEPS}-step run with small outputs: ${outcome.status} in ${seconds.toFixed(0)} s (${((seconds * 1000) / STEPS).toFixed(0)} ms a step), ${runs} workflow runs (continue-as-new), the largest history ${maxEvents} events and ${(maxBytes / 1024 / 1024).toFixed(2)} MB (${under} the 10,240-event and 10 MB warnings); ${readable} of ${STEPS - 1} tool outputs read back, ${transcript.messages.length} messages in the transcript`,
      );
    });
  } finally {
    await temporal.close();
    await model.close();
  }
}

if (require.main === module)
  manySteps().catch((err) => {
    console.error(err);
    process.exit(1);
  });
