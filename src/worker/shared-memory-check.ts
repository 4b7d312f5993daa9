import { existsSync } from 'node:fs';
import { Client } from '@temporalio/client';
import type { Worker } from '@temporalio/worker';
import { liveWorkers } from '../connection/task-queue';

/** How long after its start a worker first looks for others (they may start together). */
const FIRST_CHECK_MS = 5_000;
/** How often it looks again while it runs (a second worker may come later). */
const CHECK_EVERY_MS = 10 * 60_000;

/**
 * The sentence a worker with an embedded memory store says when other workers poll its task
 * queue: each keeps its own memory, so what one remembers another cannot recall. Pure.
 */
export function sharedMemoryWarning(dir: string, taskQueue: string, others: readonly string[]): string {
  return (
    `this worker keeps memory across conversations in an embedded store (PGlite in ${dir}), which only this process reads, ` +
    `and ${others.length} other worker(s) poll task queue "${taskQueue}" (${others.slice(0, 3).join(', ')}${others.length > 3 ? ', ...' : ''}): ` +
    'each keeps a memory of its own, so a fact one remembers another cannot recall. ' +
    "Give every worker one PostgreSQL: AGENT_MEMORY_URL=postgres://user:password@host:5432/db (the plugin's memory: { url })"
  );
}

/**
 * While `worker` runs with an embedded memory store in `dir`: looks for other workers on its
 * task queue at start (when the store holds memory already) and every ten minutes, and warns
 * once per change in their number. A server that will not describe the queue is not a reason
 * to say anything.
 */
export function watchSharedMemory(worker: Worker, dir: string, warn: (message: string) => void): () => void {
  const { taskQueue, identity } = worker.options;
  const client = new Client({ connection: worker.connection as never, namespace: worker.options.namespace });
  let told = 0;
  const check = async () => {
    if (!existsSync(dir)) return; // no memory kept yet: nothing to split
    const others = (await liveWorkers(client, taskQueue).catch(() => [] as string[])).filter((id) => id !== identity);
    if (others.length > 0 && others.length !== told) warn(sharedMemoryWarning(dir, taskQueue, others));
    told = others.length;
  };
  const first = setTimeout(() => void check(), FIRST_CHECK_MS);
  const every = setInterval(() => void check(), CHECK_EVERY_MS);
  first.unref();
  every.unref();
  return () => {
    clearTimeout(first);
    clearInterval(every);
  };
}
