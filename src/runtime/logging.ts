import { DefaultLogger, makeTelemetryFilterString, Runtime, type LogLevel } from '@temporalio/worker';

const LEVELS: readonly LogLevel[] = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR'];
let installed = false;

/**
 * Sends the SDK's logs (and the Rust core's) to stderr, so stdout carries only what our commands
 * print (`--json` must be exactly one object). The level is `AGENT_LOG_LEVEL` when set, else
 * `defaultLevel`. Call before any connection is made.
 */
export function installRuntimeLogging(defaultLevel: LogLevel, env: NodeJS.ProcessEnv = process.env): void {
  if (installed) return;
  const requested = env.AGENT_LOG_LEVEL?.toUpperCase();
  if (requested && !LEVELS.includes(requested as LogLevel)) {
    throw new Error(`AGENT_LOG_LEVEL must be one of ${LEVELS.join(', ')}, got "${env.AGENT_LOG_LEVEL}"`);
  }
  const level = (requested as LogLevel | undefined) ?? defaultLevel;
  installed = true;
  Runtime.install({
    logger: new DefaultLogger(level, (entry) => {
      process.stderr.write(`[${entry.level}] ${entry.message}${entry.meta && Object.keys(entry.meta).length ? ` ${JSON.stringify(entry.meta)}` : ''}\n`);
    }),
    telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: level }), forward: {} } },
  });
}
