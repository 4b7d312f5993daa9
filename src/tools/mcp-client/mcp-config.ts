import { readFileSync } from 'node:fs';
import { fieldExpander } from '../env-references';
import { parseDuration } from '../../core/time/duration';
import type { McpOAuthConfig } from './mcp-oauth';

/** Settings every MCP server takes, whatever its transport. */
interface McpServerCommon {
  /** Per-call timeout of the server's tools, e.g. `"30s"` (default 60 s, as for any tool). */
  timeout?: string | number;
  /** Temporal attempts per tool call when the server cannot be reached (default 6: about 30 s for it to come back). */
  maxAttempts?: number;
}

/** An MCP server the worker starts itself and talks to over stdin/stdout. */
export interface McpStdioServer extends McpServerCommon {
  command: string;
  args?: string[];
  /**
   * The server's environment, besides the few variables it inherits (PATH, HOME, USER, SHELL,
   * TERM), as other MCP clients do: the worker's own secrets reach it only when named here.
   */
  env?: Record<string, string>;
  cwd?: string;
}

/** An MCP server reached over streamable HTTP. */
export interface McpHttpServer extends McpServerCommon {
  url: string;
  /** Sent with every request, e.g. `{ "Authorization": "Bearer ${FILES_TOKEN}" }`. */
  headers?: Record<string, string>;
  /**
   * OAuth 2.1 (servers that answer 401 with a login to do): `{}` for a person's login with
   * `durable-agents mcp login <server>`, or `{"grant": "client_credentials", "clientId",
   * "clientSecret"}` for a machine client (see docs/mcp.md).
   */
  oauth?: McpOAuthConfig;
}

/** One MCP server, as the `mcpServers` map of other MCP clients spells it. */
export type McpServerConfig = McpStdioServer | McpHttpServer;

/** MCP servers by name: tool names are `<name>__<tool>`. */
export type McpServers = Record<string, McpServerConfig>;

/** Server names: what tool names start with, so the same characters OpenAI allows, and short. */
const SERVER_NAME = /^[A-Za-z0-9_-]{1,32}$/;

/**
 * Checks an `mcpServers` map and expands `${VAR}` references (in `args`, `env`, `url` and
 * `headers`) from `env`, so secrets stay in the environment rather than in the file. Every
 * problem is reported at once, naming the server and field.
 */
export function parseMcpServers(value: unknown, source: string, env: NodeJS.ProcessEnv): McpServers {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new Error(`${source}: "mcpServers" must be an object of servers by name`);
  const problems: string[] = [];
  const servers: McpServers = {};
  for (const [name, raw] of Object.entries(value as Record<string, unknown>)) {
    const at = `mcpServers.${name}`;
    if (!SERVER_NAME.test(name) || name.includes('__'))
      problems.push(
        `${at}: server names are 1-32 letters, digits, "_" or "-", without "__" (they prefix tool names: <server>__<tool>)`,
      );
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
      problems.push(`${at}: must be an object with "command" (stdio) or "url" (streamable HTTP)`);
      continue;
    }
    const s = raw as Record<string, unknown>;
    const expand = fieldExpander(at, env, problems);
    const stringMap = (field: 'env' | 'headers'): Record<string, string> | undefined => {
      const m = s[field];
      if (m === undefined) return undefined;
      if (m === null || typeof m !== 'object' || Array.isArray(m)) {
        problems.push(`${at}.${field} must be an object of strings`);
        return undefined;
      }
      return Object.fromEntries(
        Object.entries(m as Record<string, unknown>).map(([k, v]) => [k, expand(`${field}.${k}`, v)]),
      );
    };
    const common: McpServerCommon = {};
    if (s.timeout !== undefined) {
      try {
        parseDuration(s.timeout as string | number);
        common.timeout = s.timeout as string | number;
      } catch (err) {
        problems.push(`${at}.timeout: ${(err as Error).message}`);
      }
    }
    if (s.maxAttempts !== undefined) {
      if (Number.isInteger(s.maxAttempts) && (s.maxAttempts as number) >= 1)
        common.maxAttempts = s.maxAttempts as number;
      else problems.push(`${at}.maxAttempts must be an integer >= 1`);
    }
    if (s.command !== undefined && s.url !== undefined) problems.push(`${at}: give "command" or "url", not both`);
    else if (s.command !== undefined) {
      if (typeof s.command !== 'string' || !s.command.trim()) problems.push(`${at}.command must be a non-empty string`);
      if (s.args !== undefined && !(Array.isArray(s.args) && s.args.every((a) => typeof a === 'string')))
        problems.push(`${at}.args must be an array of strings`);
      if (s.cwd !== undefined && typeof s.cwd !== 'string') problems.push(`${at}.cwd must be a string`);
      const server: McpStdioServer = { ...common, command: String(s.command) };
      if (Array.isArray(s.args)) server.args = s.args.map((a, i) => expand(`args[${i}]`, a));
      const e = stringMap('env');
      if (e) server.env = e;
      if (typeof s.cwd === 'string') server.cwd = s.cwd;
      servers[name] = server;
    } else if (s.url !== undefined) {
      const url = expand('url', s.url);
      if (url && !/^https?:\/\//.test(url))
        problems.push(`${at}.url must be an http(s) URL, got ${JSON.stringify(url)}`);
      const server: McpHttpServer = { ...common, url };
      const h = stringMap('headers');
      if (h) server.headers = h;
      if (s.oauth !== undefined) {
        const o = s.oauth as Record<string, unknown>;
        if (o === null || typeof o !== 'object' || Array.isArray(o)) problems.push(`${at}.oauth must be an object`);
        else {
          const oauth: McpOAuthConfig = {};
          if (o.grant !== undefined) {
            if (o.grant === 'authorization_code' || o.grant === 'client_credentials') oauth.grant = o.grant;
            else problems.push(`${at}.oauth.grant must be "authorization_code" or "client_credentials"`);
          }
          for (const field of [
            'clientId',
            'clientSecret',
            'privateKey',
            'signingAlgorithm',
            'scope',
            'redirectUrl',
            'clientMetadataUrl',
          ] as const)
            if (o[field] !== undefined) oauth[field] = expand(`oauth.${field}`, o[field]);
          if (oauth.grant === 'client_credentials' && (!oauth.clientId || !(oauth.clientSecret || oauth.privateKey)))
            problems.push(
              `${at}.oauth: the client_credentials grant needs "clientId" and "clientSecret" (or "privateKey")`,
            );
          server.oauth = oauth;
        }
      }
      servers[name] = server;
    } else
      problems.push(`${at}: needs "command" (a stdio server the worker starts) or "url" (a streamable HTTP server)`);
  }
  if (problems.length) throw new Error(`${source}: ${problems.join('; ')}`);
  return servers;
}

/** Reads an MCP configuration file: `{"mcpServers": {...}}`, the format other MCP clients use. */
export function loadMcpConfig(path: string, env: NodeJS.ProcessEnv): McpServers {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new Error(`cannot read the MCP configuration ${path}: ${(err as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new Error(`the MCP configuration ${path} is not valid JSON: ${(err as Error).message}`);
  }
  if (json === null || typeof json !== 'object' || !('mcpServers' in json))
    throw new Error(`the MCP configuration ${path} must be an object with "mcpServers"`);
  return parseMcpServers((json as { mcpServers: unknown }).mcpServers, path, env);
}

/** The MCP servers of `AGENT_MCP_CONFIG` (a path), or none when it is not set. */
export function mcpServersFromEnv(env: NodeJS.ProcessEnv): McpServers {
  return env.AGENT_MCP_CONFIG ? loadMcpConfig(env.AGENT_MCP_CONFIG, env) : {};
}

/** Whether a server is reached over HTTP. */
export function isHttpServer(config: McpServerConfig): config is McpHttpServer {
  return 'url' in config;
}
