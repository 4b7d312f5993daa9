/**
 * The bench's durable-agents worker, in its own process (as the peer's) so its CPU can be measured
 * on its own. The same tool as the peer: `fetch_doc` returning BENCH_OUTPUT_BYTES of text.
 */
import { NativeConnection } from '@temporalio/worker';
import { z } from 'zod';
import { createAgentWorker } from '../src/worker/create-agent-worker';
import { installRuntimeLogging } from '../src/telemetry/logging';
import { defineTool } from '../src/tools';
import { defineAgent } from '../src/agents/define-agent';

const OUTPUT_BYTES = Number(process.env.BENCH_OUTPUT_BYTES ?? 2_000);

const page = ({ page }: { page: number }) => `page ${page}: ${'lorem ipsum '.repeat(OUTPUT_BYTES / 12)}`;

/** The bench tool: fast and local, so it is declared `local` and runs as a local activity. */
export const fetchDoc = defineTool({
  name: 'fetch_doc',
  description: 'Returns a document page',
  parameters: z.object({ page: z.number().int() }),
  execute: page,
  local: true,
});

/** The same tool as a normal activity, for the table's "tool as an activity" row. */
export const fetchDocActivity = defineTool({
  name: 'fetch_doc_activity',
  description: 'Returns a document page',
  parameters: z.object({ page: z.number().int() }),
  execute: page,
});

function searchAttributeSetting(value: string | undefined): 'steps' | 'milestones' | false | undefined {
  if (value === undefined || value === '') return undefined;
  if (value === 'off') return false;
  if (value === 'steps' || value === 'milestones') return value;
  throw new Error(`BENCH_SEARCH_ATTRIBUTES must be steps, milestones or off, not ${value}`);
}

async function main(): Promise<void> {
  installRuntimeLogging('ERROR');
  const connection = await NativeConnection.connect({ address: process.env.TEMPORAL_ADDRESS! });
  const worker = await createAgentWorker({
    connection,
    taskQueue: process.env.TASK_QUEUE!,
    registry: [fetchDoc, fetchDocActivity],
    // A named agent, for the A2A round trip (A2A serves named agents).
    agents: [defineAgent({ name: 'reader', instructions: 'Read the pages asked for.', tools: ['fetch_doc'] })],
    model: {
      baseURL: process.env.OPENAI_BASE_URL!,
      apiKey: 'bench',
      model: 'bench',
      requestTimeoutMs: 30_000,
      configured: true,
    },
    // BENCH_SEARCH_ATTRIBUTES=steps|milestones|off measures another setting than the default.
    searchAttributes: searchAttributeSetting(process.env.BENCH_SEARCH_ATTRIBUTES),
  });
  console.log('ours worker ready');
  await worker.run();
  // Lets the process end after SIGINT (and write a --cpu-prof profile).
  await connection.close();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
