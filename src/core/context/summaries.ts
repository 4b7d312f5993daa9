import { truncate } from '../messages/tool-arguments';

/**
 * Short, readable labels for the Temporal UI. They are display text only: nothing reads them back.
 */

/** `add(a=5, b=5)`, `stringLength(s="hello")`: an activity summary for one tool call. */
export function toolCallSummary(name: string, args: Record<string, unknown>): string {
  const parts = Object.entries(args).map(([k, v]) => `${k}=${truncate(JSON.stringify(v) ?? String(v), 60)}`);
  return truncate(`${name}(${parts.join(', ')})`, 200);
}

/** `model call 3`, or `model call 16 (final, no tools)` for the last `generate` pass. */
export function modelCallSummary(iteration: number, final: boolean): string {
  return final ? `model call ${iteration} (final, no tools)` : `model call ${iteration}`;
}

/** The workflow summary: the user's message on one line, cut to fit the UI. */
export function runSummary(message: string): string {
  return truncate(message.replace(/\s+/g, ' ').trim(), 120);
}

/**
 * A readable workflow id: `agent-` + the first words of the message + a random suffix that the
 * caller supplies (core code stays free of randomness). E.g. `agent-what-is-the-square-k3x9q2`.
 */
export function agentWorkflowId(message: string, suffix: string): string {
  const slug = message
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .split('-')
    .slice(0, 5)
    .join('-')
    .slice(0, 40)
    .replace(/-+$/, '');
  return slug ? `agent-${slug}-${suffix}` : `agent-${suffix}`;
}
