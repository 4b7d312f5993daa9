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

/**
 * Why the sandbox may not reach `address` (what `host` resolved to), or undefined when it may.
 * The worker's own loopback, link-local addresses (a cloud's metadata service at 169.254.169.254)
 * and the unspecified address are reached only when the allow-list names that very host
 * (`localhost`, or the address itself), never through a name that resolves there: a public name
 * pointed at 127.0.0.1 must not open the worker's local services to a command.
 */
export function localAddressProblem(host: string, address: string, allowed: readonly string[]): string | undefined {
  if (!isLocalAddress(address)) return undefined;
  const h = host.toLowerCase().replace(/\.$/, '');
  const named = allowed.some((p) => p.toLowerCase() === h) && (h === 'localhost' || h === address.toLowerCase());
  return named
    ? undefined
    : `${host} resolves to ${address}, an address of the worker itself or its link (loopback, link-local): the sandbox reaches such addresses only when workspace.network names them ("localhost" or the address)`;
}

/** Loopback, link-local or unspecified (IPv4, IPv6, and IPv4 mapped into IPv6). */
function isLocalAddress(address: string): boolean {
  const a = address.toLowerCase();
  const v4 = /^(?:::ffff:)?(\d+)\.(\d+)\.\d+\.\d+$/.exec(a);
  if (v4) {
    const [first, second] = [Number(v4[1]), Number(v4[2])];
    return first === 127 || first === 0 || (first === 169 && second === 254);
  }
  return a === '::1' || a === '::' || /^fe[89ab][0-9a-f]:/.test(a);
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
