import { readFileSync } from 'node:fs';
import { parseDuration } from '../../core/time/duration';
import type { A2AAgentOptions } from './a2a-agent';
import { fieldExpander } from '../env-references';

/** Tool names: what the LLM calls (OpenAI's rule). */
const NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * Checks an `a2aAgents` map (tool name → `{"url", "description"?, "headers"?, "timeout"?}`) and
 * expands `${VAR}` references in `url` and `headers`. Every problem is reported at once, naming
 * the agent and field.
 */
export function parseA2AAgents(value: unknown, source: string, env: NodeJS.ProcessEnv): A2AAgentOptions[] {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new Error(`${source}: "a2aAgents" must be an object of remote agents by tool name`);
  const problems: string[] = [];
  const agents: A2AAgentOptions[] = [];
  for (const [name, raw] of Object.entries(value as Record<string, unknown>)) {
    const at = `a2aAgents.${name}`;
    if (!NAME.test(name)) problems.push(`${at}: tool names are 1-64 letters, digits, "_" or "-"`);
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
      problems.push(`${at}: must be an object with "url" (the remote agent's A2A base URL)`);
      continue;
    }
    const a = raw as Record<string, unknown>;
    const expand = fieldExpander(at, env, problems);
    const url = expand('url', a.url);
    if (url && !/^https?:\/\//.test(url)) problems.push(`${at}.url must be an http(s) URL, got ${JSON.stringify(url)}`);
    const agent: A2AAgentOptions = { name, url };
    if (a.description !== undefined) agent.description = expand('description', a.description);
    if (a.headers !== undefined) {
      if (a.headers === null || typeof a.headers !== 'object' || Array.isArray(a.headers))
        problems.push(`${at}.headers must be an object of strings`);
      else
        agent.headers = Object.fromEntries(
          Object.entries(a.headers as Record<string, unknown>).map(([k, v]) => [k, expand(`headers.${k}`, v)]),
        );
    }
    if (a.timeout !== undefined) {
      try {
        parseDuration(a.timeout as string | number);
        agent.timeout = a.timeout as string | number;
      } catch (err) {
        problems.push(`${at}.timeout: ${(err as Error).message}`);
      }
    }
    agents.push(agent);
  }
  if (problems.length) throw new Error(`${source}: ${problems.join('; ')}`);
  return agents;
}

/** Reads an A2A configuration file: `{"a2aAgents": {...}}`. */
export function loadA2AConfig(path: string, env: NodeJS.ProcessEnv): A2AAgentOptions[] {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new Error(`cannot read the A2A configuration ${path}: ${(err as Error).message}`);
  }
  if (json === null || typeof json !== 'object' || !('a2aAgents' in json))
    throw new Error(`the A2A configuration ${path} must be an object with "a2aAgents"`);
  return parseA2AAgents((json as { a2aAgents: unknown }).a2aAgents, path, env);
}

/** The remote agents of `AGENT_A2A_CONFIG` (a path), or none when it is not set. */
export function a2aAgentsFromEnv(env: NodeJS.ProcessEnv): A2AAgentOptions[] {
  return env.AGENT_A2A_CONFIG ? loadA2AConfig(env.AGENT_A2A_CONFIG, env) : [];
}
