import { parseDuration } from '../time/duration';
import type { RunWorkspace, WorkspaceOptions } from '../state/workspace-types';
import type { ChatMessage } from '../messages/chat-message';
import type { ToolInfo } from '../messages/tool-info';

/**
 * What a run's `workspace` option means: checked, with its defaults, and the network allow-list.
 */

/** The defaults of {@link WorkspaceOptions}. */
export const WORKSPACE_DEFAULTS = {
  commandTimeoutMs: 120_000,
  memoryMb: 2048,
  diskMb: 1024,
  processes: 256,
} as const;

/** The longest command a workspace may allow: a tool activity's own timeout is set from it. */
export const MAX_COMMAND_TIMEOUT_MS = 60 * 60_000;

/** What is wrong with `value` as a run's `workspace` option (`true` or {@link WorkspaceOptions}), or undefined. */
export function workspaceOptionsProblem(value: unknown): string | undefined {
  if (value === undefined || typeof value === 'boolean') return undefined;
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return '"workspace" must be true or an object like { "network": ["registry.npmjs.org"], "commandTimeout": "2m" }';
  const o = value as Record<string, unknown>;
  const known = ['network', 'commandTimeout', 'memoryMb', 'diskMb', 'processes'];
  const unknown = Object.keys(o).filter((k) => !known.includes(k));
  if (unknown.length)
    return `"workspace" has no option ${unknown.map((k) => `"${k}"`).join(', ')} (it has ${known.join(', ')})`;
  if (o.network !== undefined) {
    if (!Array.isArray(o.network) || !o.network.every((h) => typeof h === 'string'))
      return '"workspace.network" must be a list of host names, like ["registry.npmjs.org", "*.example.com"]';
    const bad = o.network.find((h) => hostPatternProblem(h as string));
    if (bad !== undefined) return `"workspace.network": ${hostPatternProblem(bad as string)}`;
  }
  if (o.commandTimeout !== undefined) {
    let ms: number;
    try {
      ms = parseDuration(o.commandTimeout as string | number);
    } catch {
      return `"workspace.commandTimeout" must be a duration like "120s" or milliseconds, got ${JSON.stringify(o.commandTimeout)}`;
    }
    if (!(ms > 0) || ms > MAX_COMMAND_TIMEOUT_MS)
      return `"workspace.commandTimeout" must be more than 0 and at most 1h, got ${JSON.stringify(o.commandTimeout)}`;
  }
  for (const key of ['memoryMb', 'diskMb', 'processes'] as const)
    if (o[key] !== undefined && !(Number.isSafeInteger(o[key]) && (o[key] as number) > 0))
      return `"workspace.${key}" must be a whole number above 0, got ${JSON.stringify(o[key])}`;
  return undefined;
}

/** A run's workspace from its option (checked by {@link workspaceOptionsProblem}) and, when it goes on from one, where it stands. */
export function runWorkspace(option: WorkspaceOptions | true, ref?: string): RunWorkspace {
  const o = option === true ? {} : option;
  return {
    network: [...(o.network ?? [])],
    commandTimeoutMs:
      o.commandTimeout === undefined ? WORKSPACE_DEFAULTS.commandTimeoutMs : parseDuration(o.commandTimeout),
    memoryMb: o.memoryMb ?? WORKSPACE_DEFAULTS.memoryMb,
    diskMb: o.diskMb ?? WORKSPACE_DEFAULTS.diskMb,
    processes: o.processes ?? WORKSPACE_DEFAULTS.processes,
    ...(ref ? { ref } : {}),
  };
}

/**
 * Whether `host` may be reached under the allow-list: a pattern is a host name (`example.com`,
 * matched exactly, case aside) or `*.` and a domain (its subdomains, not the domain itself).
 */
export function hostAllowed(host: string, allowed: readonly string[]): boolean {
  const h = host.toLowerCase().replace(/\.$/, '');
  return allowed.some((pattern) => {
    const p = pattern.toLowerCase();
    return p.startsWith('*.') ? h.endsWith(p.slice(1)) && h.length > p.length - 1 : h === p;
  });
}

function hostPatternProblem(pattern: string): string | undefined {
  if (!/^(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/i.test(pattern))
    return `"${pattern}" is not a host name or "*." and a domain`;
  return undefined;
}

/**
 * The workspace's committed state as of the end of `messages`: the one the last message that
 * names one names (a tool result that changed it, or a user message, which notes the state it
 * was sent in). A fork or rerun from a message starts from it. Undefined: none named (empty).
 */
export function workspaceAt(messages: readonly ChatMessage[]): string | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if ((m.role === 'tool' || m.role === 'user') && m.workspace !== undefined) return m.workspace || undefined;
  }
  return undefined;
}

/** Whether a run with `option` (its `workspace`) and these tools gets a workspace: asked for, or a tool needs one. */
export function wantsWorkspace(option: boolean | WorkspaceOptions | undefined, tools: readonly ToolInfo[]): boolean {
  if (option === false) return false;
  return option !== undefined || tools.some((t) => t.workspace);
}
