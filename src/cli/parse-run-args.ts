import { validateAgentInput, type AgentInput } from '../core';
import { parseFlags, RUN_OPTION_FLAGS, runOptionsFromFlags, UsageError } from './option-flags';

export { UsageError } from './option-flags';

export const RUN_USAGE =
  'usage: client.ts run "<message>" [--tools a,b] [--immediate a] [--needs-approval a] [--approval-timeout 1h] [--max-iterations N] ' +
  '[--max-time 30s] [--on-limit stop|generate] [--system "..."] [--tool-calling tools|functions|react] [--id <workflowId>] [--json]';

export interface RunCommand {
  input: AgentInput;
  workflowId?: string;
  json: boolean;
}

/**
 * Parses `run` arguments. Every value is checked here (numbers, durations, tool names) so a typo
 * never starts a workflow.
 */
export function parseRunArgs(argv: string[], registeredTools: readonly string[]): RunCommand {
  const { values, positionals } = parseFlags(argv, { ...RUN_OPTION_FLAGS, id: { type: 'string' }, json: { type: 'boolean', default: false } });
  if (positionals.length !== 1) throw new UsageError(positionals.length === 0 ? 'missing the message to send' : `expected one message, got ${positionals.length} arguments (quote the message)`);
  const input: AgentInput = { message: positionals[0], ...runOptionsFromFlags(values, registeredTools) };
  if (values.id !== undefined && !values.id.trim()) throw new UsageError('--id must not be empty');
  const problems = validateAgentInput(input);
  if (problems.length) throw new UsageError(problems.join('; '));
  return { input, workflowId: values.id, json: values.json ?? false };
}
