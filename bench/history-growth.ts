/**
 * `npm run bench`: event-history size and wall time of agent runs by number of tool steps, on an
 * in-memory dev server with a loopback scripted model. The "conversation as input" column is what
 * the history would hold if every model call received the whole conversation as activity input
 * (as integrations that pass the prompt to each activity do): the sum over steps of the
 * conversation size, on top of our measured size.
 */
import { temporal as proto } from '@temporalio/proto';
import { z } from 'zod';
import { connectTemporal } from '../src/runtime/temporal-env';
import { installRuntimeLogging } from '../src/runtime/logging';
import { createAgentWorker } from '../src/runtime/agent-worker';
import { runOutcome, startAgentRun } from '../src/runtime/run-agent';
import { startOpenAICompatibleServer } from '../src/offline-model/openai-compatible-server';
import { defineTool, ToolRegistry } from '../src/tools';

const STEPS = (process.env.BENCH_STEPS ?? '1,5,10,20,40').split(',').map(Number);
const OUTPUT_BYTES = Number(process.env.BENCH_OUTPUT_BYTES ?? 2_000);

const fetchDoc = defineTool({
  name: 'fetch_doc',
  description: 'Returns a document page',
  parameters: z.object({ page: z.number().int() }),
  execute: ({ page }) => `page ${page}: ${'lorem ipsum '.repeat(OUTPUT_BYTES / 12)}`,
});

async function main(): Promise<void> {
  installRuntimeLogging('ERROR');
  // Always a fresh in-memory dev server on a free port, even when TEMPORAL_ADDRESS is set.
  const temporal = await connectTemporal({ port: 0, persistent: false }, { ...process.env, TEMPORAL_ADDRESS: '' });
  const { client, nativeConnection } = temporal;
  let target = 0;
  const model = await startOpenAICompatibleServer((req) => {
    const done = req.messages.filter((m) => m.role === 'tool').length;
    return done < target ? { toolCalls: [{ name: 'fetch_doc', arguments: { page: done + 1 } }] } : { content: `read ${done} pages` };
  });
  const worker = await createAgentWorker({
    connection: nativeConnection,
    taskQueue: 'bench',
    registry: new ToolRegistry([fetchDoc]),
    model: { baseURL: model.baseURL, apiKey: 'bench', model: 'bench', requestTimeoutMs: 10_000, configured: true },
  });
  const rows: string[][] = [['steps', 'history bytes', 'bytes/step', 'conversation as input (est.)', 'ratio', 'ms/step']];
  await worker.runUntil(async () => {
    for (const steps of STEPS) {
      target = steps;
      const started = Date.now();
      const outcome = await runOutcome(await startAgentRun(client, { message: 'read the document', maxIterations: steps + 1 }, { taskQueue: 'bench' }));
      const ms = Date.now() - started;
      const history = await client.workflow.getHandle(outcome.workflowId).fetchHistory();
      const bytes = proto.api.history.v1.History.encode(history).finish().length;
      const transcript = await client.workflow.getHandle(outcome.workflowId).query<Array<unknown>>('messages');
      // Model call k would have carried the first (2k - 1) messages.
      let asInput = bytes;
      for (let k = 1; k <= outcome.iterations; k++) asInput += Buffer.byteLength(JSON.stringify(transcript.slice(0, 2 * k - 1)));
      rows.push([steps, bytes, Math.round(bytes / steps), asInput, (asInput / bytes).toFixed(1) + 'x', Math.round(ms / steps)].map(String));
    }
  });
  await model.close();
  await temporal.close();
  console.log(`tool output per step: ~${OUTPUT_BYTES} bytes`);
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  for (const r of rows) console.log(r.map((c, i) => c.padStart(widths[i])).join('  '));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
