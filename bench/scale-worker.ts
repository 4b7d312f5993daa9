/**
 * A worker process of the scale bench: the agent workflows and one tool, a scripted model at
 * OPENAI_BASE_URL, Temporal's worker metrics on BENCH_METRICS_PORT (the driver reads the workflow
 * cache there), and BENCH_CACHE open conversations kept in memory at most (the SDK's default
 * otherwise).
 */
import { NativeConnection } from '@temporalio/worker';
import { z } from 'zod';
import { createAgentWorker } from '../src/worker/create-agent-worker';
import { installRuntimeLogging } from '../src/telemetry/logging';
import { defineTool } from '../src/tools';

const lookup = defineTool({
  name: 'lookup',
  description: 'Looks an order up',
  parameters: z.object({ order: z.string() }),
  execute: ({ order }) => ({ order, status: 'shipped' }),
  local: true,
});

async function main(): Promise<void> {
  installRuntimeLogging('ERROR', { metrics: `127.0.0.1:${process.env.BENCH_METRICS_PORT}` });
  const connection = await NativeConnection.connect({ address: process.env.TEMPORAL_ADDRESS! });
  const cache = Number(process.env.BENCH_CACHE);
  const worker = await createAgentWorker({
    connection,
    taskQueue: process.env.TASK_QUEUE!,
    registry: [lookup],
    model: {
      baseURL: process.env.OPENAI_BASE_URL!,
      apiKey: 'bench',
      model: 'bench',
      requestTimeoutMs: 60_000,
      configured: true,
    },
    workerOptions: {
      ...(cache > 0 ? { maxCachedWorkflows: cache } : {}),
      ...(process.env.BENCH_WORKFLOW_SLOTS
        ? { maxConcurrentWorkflowTaskExecutions: Number(process.env.BENCH_WORKFLOW_SLOTS) }
        : {}),
    },
  });
  // The bench holds our stdin: when it ends (the bench exited, crashed or was killed), so do we.
  process.stdin.on('close', () => process.exit(0)).resume();
  console.log('scale worker ready');
  await worker.run();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
