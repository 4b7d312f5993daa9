import { parseFlags, UsageError } from './option-flags';
import { serverFlags, type ServerFlags } from './server-flags';

/**
 * The arguments of the commands that serve (`worker`, `serve`, `mcp`, `a2a`), read without
 * loading what serves them: the command table parses before it loads a command's code.
 */

/** A parsed `worker` command line. */
export interface WorkerCommand {
  /** `--module <file>`: the agents and tools to serve. */
  module?: string;
}

/** Parses `worker [--module <file>]`. */
export function parseWorkerArgs(argv: string[]): WorkerCommand {
  const { values, positionals } = parseFlags(argv, { module: { type: 'string' } });
  if (positionals.length) throw new UsageError(`worker takes no arguments, got ${positionals.join(' ')}`);
  return values.module === undefined ? {} : { module: values.module };
}

/** A parsed `serve` command line. */
export interface ServeCommand {
  port: number;
  host: string;
  /** Run a worker in the process (default; `--no-worker` or AGENT_SERVE_WORKER=false: the API alone). */
  withWorker: boolean;
  /** `--module <file>`: the agents and tools its worker serves. */
  module?: string;
  /** Where the port and host came from, for messages that name what to change. */
  portFrom: '--port' | 'PORT';
  hostFrom: '--host' | 'HOST';
}

/** Parses `serve [--port 8080] [--host 127.0.0.1] [--module <file>] [--no-worker]`; PORT, HOST and AGENT_SERVE_WORKER are the defaults. */
export function parseServeArgs(argv: string[], env: NodeJS.ProcessEnv): ServeCommand {
  const { values, positionals } = parseFlags(argv, {
    port: { type: 'string' },
    host: { type: 'string' },
    module: { type: 'string' },
    'no-worker': { type: 'boolean', default: false },
  });
  if (positionals.length) throw new UsageError(`serve takes no arguments, got ${positionals.join(' ')}`);
  const fromEnv = values.port === undefined && env.PORT !== undefined && env.PORT !== '';
  if (fromEnv && (!/^\d+$/.test(env.PORT!) || Number(env.PORT) > 65535))
    throw new UsageError(`PORT must be a port number (0-65535), got "${env.PORT}"`);
  const flags = serverFlags(
    { port: values.port ?? (env.PORT || undefined), host: values.host ?? (env.HOST || undefined) },
    8080,
  );
  const raw = env.AGENT_SERVE_WORKER;
  if (raw !== undefined && !['', 'true', '1', 'false', '0'].includes(raw))
    throw new UsageError(`AGENT_SERVE_WORKER must be true or false, got "${raw}"`);
  const withWorker = !values['no-worker'] && raw !== 'false' && raw !== '0';
  return {
    ...flags,
    withWorker,
    ...(values.module !== undefined ? { module: values.module } : {}),
    portFrom: values.port !== undefined ? '--port' : 'PORT',
    hostFrom: values.host !== undefined ? '--host' : 'HOST',
  };
}

/** A parsed `mcp` command line. */
export interface McpCommand {
  transport: 'stdio' | 'http';
  port: number;
  host: string;
  /** Offer only these agents (default: every agent of the task queue's workers). */
  agents?: string[];
  /** `--module <file>`: agents and tools for a worker in this process, and the module's own MCP tools, resources and prompts (`mcpServer`). */
  module?: string;
}

/** Parses `mcp` arguments. */
export function parseMcpArgs(argv: string[]): McpCommand {
  const { values, positionals } = parseFlags(argv, {
    http: { type: 'boolean', default: false },
    port: { type: 'string' },
    host: { type: 'string' },
    agents: { type: 'string' },
    module: { type: 'string' },
  });
  if (positionals.length) throw new UsageError(`mcp takes no arguments, got ${positionals.join(' ')}`);
  if (!values.http && (values.port !== undefined || values.host !== undefined))
    throw new UsageError('--port and --host go with --http (stdio needs neither)');
  const command: McpCommand = {
    transport: values.http ? 'http' : 'stdio',
    ...serverFlags(values, 3001),
    ...(values.module !== undefined ? { module: values.module } : {}),
  };
  if (values.agents !== undefined) {
    command.agents = values.agents
      .split(',')
      .map((a) => a.trim())
      .filter(Boolean);
    if (command.agents.length === 0)
      throw new UsageError(
        '--agents needs at least one agent name (--agents support,billing); leave it out to serve every agent',
      );
  }
  return command;
}

/** A parsed `a2a` command line. */
export interface A2ACommand extends ServerFlags {
  /** `--module <file>`: the agents and tools to serve, by a worker in this process. */
  module?: string;
}

/** Parses `a2a` arguments. */
export function parseA2aArgs(argv: string[]): A2ACommand {
  const { values, positionals } = parseFlags(argv, {
    port: { type: 'string' },
    host: { type: 'string' },
    module: { type: 'string' },
  });
  if (positionals.length) throw new UsageError(`a2a takes no arguments, got ${positionals.join(' ')}`);
  return { ...serverFlags(values, 3002), ...(values.module !== undefined ? { module: values.module } : {}) };
}
