import { DefaultLogger, makeTelemetryFilterString, Runtime, type LogEntry, type LogLevel } from '@temporalio/worker';
import type { RuntimeLoggingOptions } from './logging-settings';

export { metricsFromEnv, runtimeLoggingFromEnv, type RuntimeLoggingOptions } from './logging-settings';

let installed = false;

/**
 * Sends the SDK's logs (and the Rust core's) to stderr, one line each, so stdout carries only what
 * our commands print (`--json` must be exactly one object) and a failed activity is a line to read,
 * not a stack trace. The level is `options.level` (the settings' `AGENT_LOG_LEVEL`) when set, else
 * `defaultLevel`. Call before any connection is made; a Runtime the program installed (or the SDK
 * created) already is left as it is.
 */
export function installRuntimeLogging(defaultLevel: LogLevel, options: RuntimeLoggingOptions = {}): void {
  if (installed) return;
  installed = true;
  try {
    installRuntime(options.level ?? defaultLevel, options.metrics, options);
  } catch (err) {
    // Only the first Runtime counts: the program's own, or the SDK's default once a connection exists.
    if ((err as Error)?.name !== 'IllegalStateError') throw err;
  }
}

function installRuntime(level: LogLevel, metrics: string | undefined, options: RuntimeLoggingOptions): void {
  Runtime.install({
    logger: new DefaultLogger(level, (entry) => process.stderr.write(`${formatLogEntry(entry)}\n`)),
    telemetryOptions: {
      logging: { filter: makeTelemetryFilterString({ core: level }), forward: {} },
      // The runtime's own Prometheus endpoint: Temporal's worker metrics and the agents' (agent_*).
      ...(metrics ? { metrics: { prometheus: { bindAddress: metrics } } } : {}),
    },
    // Signals are ours to handle (below): the SDK's own handler keeps the process alive on the
    // first SIGINT or SIGTERM even when there is no worker to stop, as in an HTTP server.
    shutdownSignals: [],
  });
  if (options.handleSignals !== false) stopOnSignals();
}

/** What this module uses of the Runtime beyond its public types (present in the SDK since 1.9). */
interface RuntimeShutdown {
  startShutdownSequence?: () => void;
  shutdownSignalCallbacks?: { size: number };
}

/**
 * The first SIGINT or SIGTERM stops the process as its user expects. With workers, they shut down
 * gracefully (polling stops, activities in flight get the grace time), `worker.run()` resolves and
 * the program goes on to close its connections and end, stopping an embedded dev server it
 * started. Without workers (a process that only serves the HTTP API, say) the signal does what it
 * does in any Node program: it ends the process, unless the program handles it itself. A second
 * signal always ends the process at once.
 */
function stopOnSignals(): void {
  const onSignal = (signal: NodeJS.Signals) => {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    const runtime = Runtime.instance() as unknown as RuntimeShutdown;
    const workers = runtime.shutdownSignalCallbacks?.size ?? 1;
    if (workers > 0 && runtime.startShutdownSequence) return runtime.startShutdownSequence();
    if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
}

/** One log line: level, message, and the metadata as JSON with errors spelled out. */
export function formatLogEntry(entry: Pick<LogEntry, 'level' | 'message' | 'meta'>): string {
  // An activity's task token is an opaque 200-character key that no reader needs.
  const { taskToken: _token, ...rest } = entry.meta ?? {};
  const meta = Object.keys(rest).length ? ` ${JSON.stringify(rest, errorsAsJson)}` : '';
  return `[${entry.level}] ${entry.message}${meta}`;
}

/**
 * `JSON.stringify` writes an `Error` as `{}` (its fields are not enumerable), which left worker
 * logs saying `"error":{}` for every failed activity. Errors become their name, type (Temporal
 * failures), message and cause.
 */
function errorsAsJson(_key: string, value: unknown): unknown {
  if (!(value instanceof Error)) return value;
  const out: Record<string, unknown> = { name: value.name };
  const type = (value as { type?: unknown }).type;
  if (typeof type === 'string' && type) out.type = type;
  out.message = value.message;
  if (value.cause !== undefined) out.cause = value.cause;
  return out;
}
