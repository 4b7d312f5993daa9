/**
 * A worker process of the tenants bench: the agent workflows and a scripted model at
 * OPENAI_BASE_URL (model "bench"), with AGENT_RATE_LIMITS read from the environment as any worker
 * reads it, and BENCH_ACTIVITY_SLOTS / BENCH_WORKFLOW_SLOTS to make the worker the bottleneck.
 */
import { NativeConnection } from '@temporalio/worker';
import { createAgentWorker } from '../src/worker/create-agent-worker';
import { installRuntimeLogging } from '../src/telemetry/logging';

async function main(): Promise<void> {
  installRuntimeLogging('ERROR');
  const connection = await NativeConnection.connect({ address: process.env.TEMPORAL_ADDRESS! });
  const slots = (name: string) => (process.env[name] ? Number(process.env[name]) : undefined);
  const activities = slots('BENCH_ACTIVITY_SLOTS');
  const workflows = slots('BENCH_WORKFLOW_SLOTS');
  const worker = await createAgentWorker({
    connection,
    taskQueue: process.env.TASK_QUEUE!,
    registry: [],
    model: {
      baseURL: process.env.OPENAI_BASE_URL!,
      apiKey: 'bench',
      model: 'bench',
      requestTimeoutMs: 60_000,
      configured: true,
    },
    workerOptions: {
      ...(activities ? { maxConcurrentActivityTaskExecutions: activities } : {}),
      ...(workflows ? { maxConcurrentWorkflowTaskExecutions: workflows } : {}),
      ...(process.env.BENCH_STICKY_TIMEOUT
        ? { stickyQueueScheduleToStartTimeout: process.env.BENCH_STICKY_TIMEOUT as `${number}s` }
        : {}),
    },
  });
  // The bench holds our stdin: when it ends, so do we.
  process.stdin.on('close', () => process.exit(0)).resume();
  console.log('tenants worker ready');
  await worker.run();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
