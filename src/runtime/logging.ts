import { DefaultLogger, makeTelemetryFilterString, Runtime, type LogLevel } from '@temporalio/worker';

let installed = false;

/**
 * Sends the SDK's logs (and the Rust core's) to stderr at `level`, so stdout carries only what
 * our commands print (`--json` must be exactly one object). Call before any connection is made.
 */
export function installRuntimeLogging(level: LogLevel = (process.env.AGENT_LOG_LEVEL as LogLevel) || 'WARN'): void {
  if (installed) return;
  installed = true;
  Runtime.install({
    logger: new DefaultLogger(level, (entry) => {
      process.stderr.write(`[${entry.level}] ${entry.message}${entry.meta && Object.keys(entry.meta).length ? ` ${JSON.stringify(entry.meta)}` : ''}\n`);
    }),
    telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: level }), forward: {} } },
  });
}
