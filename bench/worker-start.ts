/**
 * Worker start to first poll: how long from `node worker.js` until the worker polls its task
 * queue, as deploys, autoscaling and tests pay it. Cold is a first start on a machine (the
 * workflow bundle is made with webpack and cached); warm is every start after that (the bundle is
 * read from the cache). The peer's worker bundles at every start, so its start is one figure.
 * The workers run under tsx here, as the bench's workers do; compiled, a start is a little shorter.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@temporalio/client';
import { temporal as proto } from '@temporalio/proto';

const ROOT = join(__dirname, '..');

/** Start times in milliseconds: ours cold and warm (median of `warmRuns`), and the peer's. */
export interface WorkerStartFigures {
  coldMs: number;
  warmMs: number;
  peerMs: number;
}

/** Measures the starts, each worker on a task queue of its own, stopped once it polls. */
export async function measureWorkerStart(
  client: Client,
  env: NodeJS.ProcessEnv,
  peerWorker: string,
  warmRuns = 3,
): Promise<WorkerStartFigures> {
  const cache = mkdtempSync(join(tmpdir(), 'bench-bundle-cache-'));
  try {
    const ours = (taskQueue: string) =>
      timeToFirstPoll(client, taskQueue, process.execPath, ['--import', 'tsx', 'bench/ours-worker.ts'], {
        ...env,
        TASK_QUEUE: taskQueue,
        AGENT_BUNDLE_CACHE: cache,
      });
    const coldMs = await ours(`start-cold-${randomUUID()}`);
    const warm: number[] = [];
    for (let i = 0; i < warmRuns; i++) warm.push(await ours(`start-warm-${randomUUID()}`));
    const peerQueue = `start-peer-${randomUUID()}`;
    const peerMs = await timeToFirstPoll(client, peerQueue, process.execPath, [peerWorker], {
      ...env,
      TASK_QUEUE: peerQueue,
    });
    return { coldMs, warmMs: warm.sort((a, b) => a - b)[Math.floor(warm.length / 2)], peerMs };
  } finally {
    rmSync(cache, { recursive: true, force: true });
  }
}

/** Spawns a worker and waits until the server has seen it poll its workflow task queue. */
async function timeToFirstPoll(
  client: Client,
  taskQueue: string,
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<number> {
  const started = performance.now();
  const child = spawn(command, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  try {
    for (const deadline = Date.now() + 120_000; ;) {
      const described = await client.workflowService.describeTaskQueue({
        namespace: 'default',
        taskQueue: { name: taskQueue },
        taskQueueType: proto.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
      });
      if ((described.pollers?.length ?? 0) > 0) return performance.now() - started;
      if (child.exitCode !== null || Date.now() > deadline)
        throw new Error(`${args.join(' ')} did not poll ${taskQueue}:\n${out}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  } finally {
    await stop(child);
  }
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('close', () => resolve());
    child.kill('SIGKILL');
  });
}
