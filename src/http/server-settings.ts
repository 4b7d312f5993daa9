import { agentNameProblem } from '../core/state/agents';
import { parseDuration } from '../core/time/duration';
import { publicUrlProblem } from '../a2a/request-edge';
import type { A2AServerExtension } from '../a2a/a2a-server-extension';

/** What the HTTP API's servers (`serve`, `a2a`) read of the environment besides access rules. */
export interface HttpServerSettings {
  /** `AGENT_PUBLIC_URL`: the base URL clients reach the server at, for the links it hands out (A2A cards). */
  publicUrl?: string;
  /** The A2A server's settings. */
  a2a?: A2AServerSettings;
  /**
   * `AGENT_MCP_STATE_KEY` (at least 32 characters): signs the MCP server's `requestState` between
   * a 2026-07-28 call's rounds; give every replica behind one URL the same key.
   */
  mcpStateKey?: string;
}

/** How the HTTP API serves its agents over A2A. */
export interface A2AServerSettings {
  /** `AGENT_A2A_DEFAULT`: the agent the server's root serves (its card, JSON-RPC at `/`); default: the only agent. */
  defaultAgent?: string;
  /**
   * `AGENT_A2A_MAX_BLOCKING_WAIT` (`30s`, `5m`): how long a blocking `SendMessage` waits for its
   * task to end or ask for input before it answers with the task still working (the client
   * follows it with `GetTask`, `SubscribeToTask` or a push config). Default: as long as the task
   * takes, as the protocol asks; a cap suits servers behind proxies that cut idle requests.
   */
  maxBlockingWaitMs?: number;
  /**
   * Not from the environment: the application's say in each A2A message before an agent sees it
   * (the `a2aServer` export of `a2a --module`); see {@link A2AServerExtension}.
   */
  extend?: A2AServerExtension;
  /**
   * `AGENT_A2A_GRPC_PORT`: serve A2A's gRPC binding too, on this port (the cards declare it);
   * `AGENT_A2A_GRPC_URL` (`agents.example.com:443`): where clients dial it, when not the host the
   * card was asked of at this port.
   */
  grpc?: { port: number; url?: string };
}

/**
 * Reads `AGENT_PUBLIC_URL`, `AGENT_A2A_DEFAULT`, `AGENT_A2A_MAX_BLOCKING_WAIT`,
 * `AGENT_A2A_GRPC_PORT`, `AGENT_A2A_GRPC_URL` and `AGENT_MCP_STATE_KEY`; throws with the fix on a
 * malformed value.
 */
export function httpServerSettingsFromEnv(env: NodeJS.ProcessEnv): HttpServerSettings {
  const settings: HttpServerSettings = {};
  const url = env.AGENT_PUBLIC_URL?.trim();
  if (url) {
    const problem = publicUrlProblem(url);
    if (problem) throw new Error(`AGENT_PUBLIC_URL: ${problem}`);
    settings.publicUrl = url.replace(/\/+$/, '');
  }
  const agent = env.AGENT_A2A_DEFAULT?.trim();
  if (agent) {
    const problem = agentNameProblem(agent);
    if (problem) throw new Error(`AGENT_A2A_DEFAULT: ${problem}`);
    settings.a2a = { ...settings.a2a, defaultAgent: agent };
  }
  const wait = env.AGENT_A2A_MAX_BLOCKING_WAIT?.trim();
  if (wait) {
    let ms: number;
    try {
      ms = parseDuration(wait);
    } catch (err) {
      throw new Error(`AGENT_A2A_MAX_BLOCKING_WAIT: ${(err as Error).message}`);
    }
    settings.a2a = { ...settings.a2a, maxBlockingWaitMs: ms };
  }
  const grpcPort = env.AGENT_A2A_GRPC_PORT?.trim();
  const grpcUrl = env.AGENT_A2A_GRPC_URL?.trim();
  if (grpcPort) {
    const port = Number(grpcPort);
    if (!Number.isInteger(port) || port < 1 || port > 65535)
      throw new Error(`AGENT_A2A_GRPC_PORT: "${grpcPort}" is not a port: give a number from 1 to 65535`);
    if (grpcUrl && !/^[^\s/:]+:\d+$/.test(grpcUrl))
      throw new Error(
        `AGENT_A2A_GRPC_URL: "${grpcUrl}" is not host:port, as gRPC clients dial it (agents.example.com:443, no scheme)`,
      );
    settings.a2a = { ...settings.a2a, grpc: { port, ...(grpcUrl ? { url: grpcUrl } : {}) } };
  } else if (grpcUrl)
    throw new Error('AGENT_A2A_GRPC_URL is set without AGENT_A2A_GRPC_PORT, the port to serve gRPC on');
  const key = env.AGENT_MCP_STATE_KEY?.trim();
  if (key) {
    if (key.length < 32)
      throw new Error(
        `AGENT_MCP_STATE_KEY: ${key.length} characters is too short to sign with: use at least 32 (e.g. \`openssl rand -hex 32\`)`,
      );
    settings.mcpStateKey = key;
  }
  return settings;
}
