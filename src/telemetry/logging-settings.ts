import type { LogLevel } from '@temporalio/worker';

/**
 * The logging and metrics settings of the environment, apart from the Runtime that applies them
 * (logging.ts): reading them loads nothing of the worker SDK, which a command-line client that
 * opens no worker connection never needs (half a second of every command's start).
 */

const LEVELS: readonly LogLevel[] = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR'];

/** Options of `installRuntimeLogging` (logging.ts). */
export interface RuntimeLoggingOptions {
  /**
   * Stop on SIGINT/SIGTERM (default true): workers shut down gracefully, and a process without
   * workers ends. Command-line clients pass false and handle Ctrl+C themselves: it cancels a chat
   * turn or stops waiting for a run, and their in-process worker must not stop underneath them.
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
