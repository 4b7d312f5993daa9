import { DefaultLogger, makeTelemetryFilterString, Runtime, type LogEntry, type LogLevel } from '@temporalio/worker';

const LEVELS: readonly LogLevel[] = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR'];
let installed = false;

/** Options of {@link installRuntimeLogging}. */
export interface RuntimeLoggingOptions {
  /**
   * Let the SDK stop workers on SIGINT/SIGTERM (default true: worker processes). Command-line
   * clients pass false and handle Ctrl+C themselves: it cancels a chat turn or stops waiting for a
   * run, and the SDK must not shut their in-process worker down underneath them.
   */
  handleSignals?: boolean;
  /** The level asked for (`AGENT_LOG_LEVEL`, see {@link runtimeLoggingFromEnv}); default: the caller's default level. */
  level?: LogLevel;
  /** Where the Prometheus endpoint listens (`AGENT_METRICS_PORT`, see {@link metricsFromEnv}); default: none. */
  metrics?: string;
}

/** `AGENT_LOG_LEVEL` and `AGENT_METRICS_PORT`/`AGENT_METRICS_HOST`; throws, naming the variable, on a value it cannot use. */
export function runtimeLoggingFromEnv(env: NodeJS.ProcessEnv): Pick<RuntimeLoggingOptions, 'level' | 'metrics'> {
  const requested = env.AGENT_LOG_LEVEL?.toUpperCase();
  if (requested && !LEVELS.includes(requested as LogLevel)) {
    throw new Error(`AGENT_LOG_LEVEL must be one of ${LEVELS.join(', ')}, got "${env.AGENT_LOG_LEVEL}"`);
  }
  const metrics = metricsFromEnv(env);
  return { ...(requested ? { level: requested as LogLevel } : {}), ...(metrics ? { metrics } : {}) };
}

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
    ...(options.handleSignals === false ? { shutdownSignals: [] } : {}),
  });
}

/**
 * `AGENT_METRICS_PORT` (with `AGENT_METRICS_HOST`, default 0.0.0.0, so a scraper elsewhere can
 * reach it): where the Prometheus endpoint (`/metrics`) listens; off when unset.
 */
export function metricsFromEnv(env: NodeJS.ProcessEnv): string | undefined {
  const port = env.AGENT_METRICS_PORT;
  if (port === undefined || port === '') return undefined;
  if (!/^\d+$/.test(port) || Number(port) < 1 || Number(port) > 65535)
    throw new Error(`AGENT_METRICS_PORT must be a port number (1-65535), got "${port}"`);
  const host = env.AGENT_METRICS_HOST || '0.0.0.0';
  return `${host.includes(':') ? `[${host}]` : host}:${port}`;
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
