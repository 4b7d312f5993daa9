import { encryptionKeysFromEnv } from '../codec/encryption-codec';
import { isHttpServer, loadMcpConfig, mcpServersFromEnv } from '../tools/mcp-client/mcp-config';
import { loginToMcpServer } from '../tools/mcp-client/mcp-login';
import { defaultTokenPath, McpTokenStore } from '../tools/mcp-client/mcp-oauth';
import { parseFlags, UsageError } from './option-flags';
import { tenantProblem } from '../core/fleet/tenants';

/**
 * `durable-agents mcp login <server>`: logs in to a remote MCP server that needs OAuth, once, for
 * the workers (see `loginToMcpServer`): the server as the workers' MCP configuration names it
 * (`AGENT_MCP_CONFIG`, or `--config`), the link to open printed, the redirect taken on a loopback
 * port, and the login kept in the workers' token file (`AGENT_MCP_TOKENS`, encrypted with
 * `AGENT_ENCRYPTION_KEYS` when set). Says what it did.
 */
export async function mcpLogin(
  argv: string[],
  env: NodeJS.ProcessEnv,
  say: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): Promise<void> {
  const { values, positionals } = parseFlags(argv, { config: { type: 'string' }, tenant: { type: 'string' } });
  const tenantIssue = tenantProblem(values.tenant, '--tenant');
  if (tenantIssue) throw new UsageError(tenantIssue);
  const tenant = values.tenant;
  if (positionals.length !== 1)
    throw new UsageError(`mcp login takes the server's name, got ${positionals.length || 'none'}`);
  const [name] = positionals;
  const path = values.config ?? env.AGENT_MCP_CONFIG;
  if (!path)
    throw new UsageError('no MCP configuration: set AGENT_MCP_CONFIG (as the workers have it) or give --config');
  const servers = values.config ? loadMcpConfig(values.config, env) : mcpServersFromEnv(env);
  const config = servers[name];
  if (!config)
    throw new UsageError(`no MCP server "${name}" in ${path} (servers: ${Object.keys(servers).join(', ') || 'none'})`);
  if (!isHttpServer(config)) throw new UsageError(`"${name}" is a stdio server: only servers reached by URL log in`);
  const store = new McpTokenStore(defaultTokenPath(env), encryptionKeysFromEnv(env));
  const whose = tenant === undefined ? '' : ` for tenant "${tenant}"`;
  const result = await loginToMcpServer(
    name,
    config,
    store,
    (url) => {
      say(
        `Open this link to log in to "${name}" (${config.url})${whose}:\n\n  ${url.toString()}\n\nWaiting for the login...`,
      );
    },
    tenant === undefined ? {} : { tenant },
  );
  say(
    result.outcome === 'already'
      ? `"${name}" needs no new login: the stored login (or its machine client) works; ${result.tools.length} tools.`
      : `Logged in to "${name}"${whose}: ${result.tools.length} tools.${tenant === undefined ? '' : ` Runs of tenant "${tenant}" use this login, and no other tenant's runs do.`} The login is in ${store.path}${encryptionKeysFromEnv(env)?.length ? ' (encrypted with AGENT_ENCRYPTION_KEYS)' : ''}, where the workers read it.`,
  );
}
