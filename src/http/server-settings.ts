import { agentNameProblem, parseDuration } from '../core';
import { publicUrlProblem } from '../a2a/request-edge';

/** What the HTTP API's servers (`serve`, `a2a`) read of the environment besides access rules. */
export interface HttpServerSettings {
  /** `AGENT_PUBLIC_URL`: the base URL clients reach the server at, for the links it hands out (A2A cards). */
  publicUrl?: string;
  /** The A2A server's settings. */
  a2a?: A2AServerSettings;
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
}

/** Reads `AGENT_PUBLIC_URL`, `AGENT_A2A_DEFAULT` and `AGENT_A2A_MAX_BLOCKING_WAIT`; throws with the fix on a malformed value. */
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
  return settings;
}
