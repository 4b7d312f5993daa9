import { Worker, type WorkerOptions, type WorkerPlugin } from '@temporalio/worker';

/**
 * The fleet's own worker: while any agents worker of this process runs, one more worker, on the
 * same connection, serves the fleet's task queue (the tenants' ledgers and the models' rate
 * governors; see contracts/fleet-queue.ts). One per process, connection, namespace and queue,
 * however many agents workers share it; it stops with the last of them.
 *
 * Why a queue of its own: on the agents' queue a ledger lived on whichever queue first met its
 * tenant (gone with that queue's workers), and every reservation waited behind the flood of runs
 * it was there to limit (a model call's Update then timed out).
 */

/** Workflow tasks the fleet worker runs at once: its workflows answer small updates, and many at once only queue inside the process. */
const FLEET_WORKFLOW_SLOTS = 4;

/**
 * How long after its first agents worker starts the fleet worker starts, unless a model call of
 * this process needs it sooner (see {@link needFleetWorkers}): a short-lived worker (a script, a
 * test) then never pays for a second worker it did not use.
 */
const FLEET_START_DELAY_MS = 5_000;

interface Shared {
  users: number;
  /** Starts the fleet worker now, if it has not started (or been given up). */
  start: () => void;
  timer?: NodeJS.Timeout;
  worker?: Worker;
  running?: Promise<void>;
  /** Set once the worker is being created: a release meanwhile waits for it. */
  starting?: Promise<void>;
  closed: boolean;
}

/** Fleet workers of this process, by connection and where they poll. */
const shared = new Map<unknown, Map<string, Shared>>();
/** The workers {@link joinFleetQueue} started (the plugin runs them as they are, with nothing of an agents worker's own). */
const fleetWorkers = new WeakSet<Worker>();

/** Whether `worker` is a fleet worker {@link joinFleetQueue} started. */
export function isFleetWorker(worker: Worker): boolean {
  return fleetWorkers.has(worker);
}

/** Starts this process's fleet workers now: a model call is about to ask a ledger or a governor. */
export function needFleetWorkers(): void {
  for (const byConnection of shared.values()) for (const entry of byConnection.values()) entry.start();
}

/**
 * Joins (or sets up) the fleet worker for `worker`'s connection and namespace, configured by
 * `plugin` as the agents worker is (converters, sinks, tracing); it starts a few seconds later, or
 * when a model call of this process needs it ({@link needFleetWorkers}). Returns what leaves it.
 * A worker that serves the fleet queue itself needs none; one that could not be started is
 * reported through `warn` and leaves the agents worker running: its ledgers then wait for another
 * worker.
 */
export function joinFleetQueue(
  worker: Worker,
  plugin: WorkerPlugin,
  fleetTaskQueue: string,
  warn: (message: string) => void,
): () => Promise<void> {
  const { namespace, taskQueue } = worker.options;
  if (taskQueue === fleetTaskQueue) return async () => undefined;
  const byConnection = shared.get(worker.connection) ?? new Map<string, Shared>();
  shared.set(worker.connection, byConnection);
  const key = `${namespace}\n${fleetTaskQueue}`;
  let entry = byConnection.get(key);
  if (!entry) {
    const created: Shared = { users: 0, closed: false, start: () => undefined };
    created.start = () => {
      if (created.starting || created.closed) return;
      clearTimeout(created.timer);
      created.starting = Worker.create(fleetWorkerOptions(worker, plugin, fleetTaskQueue))
        .then((w) => {
          created.worker = w;
          fleetWorkers.add(w);
          created.running = w.run().catch((err: unknown) => {
            warn(`the fleet worker on task queue "${fleetTaskQueue}" stopped: ${(err as Error).message}`);
          });
        })
        .catch((err: unknown) => {
          if (byConnection.get(key) === created) byConnection.delete(key);
          warn(
            `could not start a worker for the fleet's task queue "${fleetTaskQueue}" (tenants' ledgers, rate governors): ${(err as Error).message}; model calls of tenants with budgets and of rate-limited models wait for another worker to serve it`,
          );
        });
    };
    created.timer = setTimeout(created.start, FLEET_START_DELAY_MS);
    created.timer.unref();
    byConnection.set(key, created);
    entry = created;
  }
  const mine = entry;
  mine.users++;
  let left = false;
  return async () => {
    if (left) return;
    left = true;
    if (--mine.users > 0) return;
    // Gone from the map at once: a worker that starts from now on sets up a fleet worker of its own.
    if (byConnection.get(key) === mine) byConnection.delete(key);
    mine.closed = true;
    clearTimeout(mine.timer);
    await mine.starting;
    if (mine.worker && mine.worker.getState() === 'RUNNING') mine.worker.shutdown();
    await mine.running;
  };
}

/** The fleet worker's options: the agents worker's bundle and identity, the plugin that configured it, few slots. */
function fleetWorkerOptions(worker: Worker, plugin: WorkerPlugin, fleetTaskQueue: string): WorkerOptions {
  const o = worker.options;
  return {
    connection: worker.connection,
    namespace: o.namespace,
    taskQueue: fleetTaskQueue,
    identity: `${o.identity} (fleet)`,
    plugins: [plugin],
    // The bundle the agents worker was given; else what it was bundled from, which the plugin's
    // bundle cache has by now (the agents worker saved it), so nothing is bundled twice.
    ...(o.workflowBundle ? { workflowBundle: o.workflowBundle } : { workflowsPath: o.workflowsPath }),
    // Unversioned, whatever the agents worker is: the fleet's queue is shared by every deployment
    // of the namespace (a task queue belongs to one), and its workflows move to each build anyway.
    maxConcurrentWorkflowTaskExecutions: FLEET_WORKFLOW_SLOTS,
    // Its workflows call no activities: it polls for none, and takes none of the agents' work.
    enableNonLocalActivities: false,
    maxCachedWorkflows: 200,
    shutdownGraceTime: '1s',
  };
}
