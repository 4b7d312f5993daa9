import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { AgentDefinition } from '../agents/define-agent';
import type { AnyToolDefinition } from '../tools/define-tool';
import { ToolRegistry } from '../tools/registry';
import type { McpServerExtension } from '../mcp-server/mcp-server-extension';
import type { A2AServerExtension } from '../a2a/a2a-server-extension';
import { UsageError } from './option-flags';
import type { LocalWorker } from './session';

/** What `--module` of `mcp` or `a2a` loads: the agents and tools for its worker, and what it serves besides. */
export interface ServedModule extends LocalWorker {
  /** The module's `mcpServer`: its own MCP tools, resources and prompts (see `McpServerExtension`). */
  mcpServer?: McpServerExtension;
  /** The module's `a2aServer`: its say in each A2A message (see `A2AServerExtension`). */
  a2aServer?: A2AServerExtension;
}

/** What a module's server export must look like, per server. */
const SERVER_EXPORTS = {
  mcpServer: {
    valid: isMcpExtension,
    shape:
      '`mcpServer` must be an object with `legacy(server)` and/or `modern(server, context)` functions (see docs/mcp.md, "Your own tools, resources and prompts")',
  },
  a2aServer: {
    valid: (v: unknown) =>
      typeof v === 'object' && v !== null && typeof (v as { onMessage?: unknown }).onMessage === 'function',
    shape:
      '`a2aServer` must be an object with an `onMessage(message, context)` function (see docs/a2a.md, "Your own answers")',
  },
} as const;

/**
 * `--module <file>` of `worker` and `serve`: the user's agents and tools, from a module that
 * exports `agents` (an array of `defineAgent(...)`) and, optionally, `tools` (an array of
 * `defineTool(...)`, or a `ToolRegistry`), as named exports or as its default export's fields.
 * Loaded with `require`, so compiled JavaScript (and ES modules, on Node 20.19+); a TypeScript
 * file needs a loader in the process, which the error names.
 */
export function loadAgentModule(
  path: string,
  options: { mcpServer?: boolean; a2aServer?: boolean } = {},
): ServedModule {
  const file = resolve(path);
  if (!existsSync(file)) throw new UsageError(`--module ${path}: no such file (${file})`);
  let loaded: Record<string, unknown>;
  try {
    // require, not import(): the package is CommonJS, and Node 20.19+ requires ES modules too.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    loaded = require(file) as Record<string, unknown>;
  } catch (err) {
    const typescript = /\.[cm]?tsx?$/.test(file)
      ? ` (a TypeScript module needs a loader: NODE_OPTIONS='--import tsx' npx durable-agents ... --module ${path}, or build it to JavaScript first)`
      : '';
    throw new UsageError(`--module ${path} failed to load: ${(err as Error).message}${typescript}`);
  }
  const fromDefault = loaded.default && typeof loaded.default === 'object' ? (loaded.default as object) : {};
  const exported = { ...fromDefault, ...loaded } as Record<string, unknown>;
  const { agents, tools } = exported;
  // The server export the command serves (`mcp`'s `mcpServer`, `a2a`'s `a2aServer`), if any.
  const kind = options.mcpServer ? 'mcpServer' : options.a2aServer ? 'a2aServer' : undefined;
  const served = kind ? exported[kind] : undefined;
  if (agents === undefined && tools === undefined && served === undefined)
    throw new UsageError(
      `--module ${path} exports neither \`agents\` nor \`tools\`${kind ? ` nor \`${kind}\`` : ''}: export const agents = [defineAgent({...})] (and tools = [defineTool({...})])`,
    );
  if (kind && served !== undefined && !SERVER_EXPORTS[kind].valid(served))
    throw new UsageError(`--module ${path}: ${SERVER_EXPORTS[kind].shape}`);
  if (agents !== undefined && !(Array.isArray(agents) && agents.every(isAgent)))
    throw new UsageError(`--module ${path}: \`agents\` must be an array of defineAgent(...) definitions`);
  if (tools !== undefined && !(tools instanceof ToolRegistry) && !Array.isArray(tools))
    throw new UsageError(
      `--module ${path}: \`tools\` must be an array of defineTool(...) definitions or a ToolRegistry`,
    );
  const registry =
    tools instanceof ToolRegistry ? tools : new ToolRegistry((tools as AnyToolDefinition[] | undefined) ?? []);
  return {
    agents: agents as AgentDefinition<unknown>[] | undefined,
    registry,
    ...(kind && served !== undefined ? { [kind]: served } : {}),
  };
}

function isMcpExtension(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const { legacy, modern } = value as { legacy?: unknown; modern?: unknown };
  return (
    (legacy !== undefined || modern !== undefined) &&
    (legacy === undefined || typeof legacy === 'function') &&
    (modern === undefined || typeof modern === 'function')
  );
}

function isAgent(value: unknown): boolean {
  return typeof value === 'object' && value !== null && typeof (value as { name?: unknown }).name === 'string';
}
