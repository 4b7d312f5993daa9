import type { HttpAccessOptions } from '../http/access';
import { isLoopback } from '../http/access';
import { UsageError } from './option-flags';

/** Where a server command (`mcp --http`, `a2a`, `serve`) listens (`--task-queue` is the command line's, see `main`). */
export interface ServerFlags {
  port: number;
  host: string;
}

/** Reads `--port` and `--host` of a server command; a usage error for a bad one. */
export function serverFlags(values: { port?: string; host?: string }, defaultPort: number): ServerFlags {
  const port = values.port === undefined ? defaultPort : Number(values.port);
  if (!/^\d+$/.test(values.port ?? String(defaultPort)) || port > 65535)
    throw new UsageError(`--port must be a port number (0-65535), got "${values.port}"`);
  return { port, host: values.host ?? '127.0.0.1' };
}

/** Refuses to listen beyond loopback without bearer tokens: the agents would be open to the network. */
export function refuseOpenExposure(host: string, access: HttpAccessOptions): void {
  if (!access.tokens?.length && !isLoopback(host))
    throw new UsageError(
      `--host ${host} would expose the agents to the network without authentication: set AGENT_HTTP_TOKENS (comma-separated bearer tokens) or keep the default 127.0.0.1`,
    );
}

/** What a server command says about its access as it starts, then how to stop it. */
export function accessNotes(access: HttpAccessOptions): string[] {
  return [
    access.tokens?.length
      ? `Bearer tokens required (${access.tokens.length} configured).`
      : 'No AGENT_HTTP_TOKENS: loopback only, without authentication.',
    'Press Ctrl+C to stop.',
  ];
}
