import { parseArgs } from 'node:util';
import { parseDuration, validateAgentInput, type AgentInput } from '../core';

/** A mistake on the command line; reported with usage, exit code 2, before anything starts. */
export class UsageError extends Error {}

export const RUN_USAGE =
  'usage: client.ts run "<message>" [--tools a,b] [--immediate a] [--max-iterations N] [--max-time 30s] ' +
  '[--on-limit stop|generate] [--system "..."] [--id <workflowId>] [--json]';

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
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        tools: { type: 'string' },
        immediate: { type: 'string' },
        'max-iterations': { type: 'string' },
        'max-time': { type: 'string' },
        'on-limit': { type: 'string' },
        system: { type: 'string' },
        id: { type: 'string' },
        json: { type: 'boolean', default: false },
      },
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const { values, positionals } = parsed;
  if (positionals.length !== 1) throw new UsageError(positionals.length === 0 ? 'missing the message to send' : `expected one message, got ${positionals.length} arguments (quote the message)`);
  const input: AgentInput = { message: positionals[0] };
  if (values.system !== undefined) input.system = values.system;
  if (values.tools !== undefined) input.tools = toolList('--tools', values.tools, registeredTools);
  if (values.immediate !== undefined) {
    input.immediateTools = toolList('--immediate', values.immediate, registeredTools);
    const outside = input.tools ? input.immediateTools.filter((t) => !input.tools!.includes(t)) : [];
    if (outside.length) throw new UsageError(`--immediate names tools missing from --tools: ${outside.join(', ')}`);
  }
  if (values['max-iterations'] !== undefined) {
    const n = Number(values['max-iterations']);
    if (!/^\d+$/.test(values['max-iterations']) || n < 1) throw new UsageError(`--max-iterations must be a whole number >= 1, got "${values['max-iterations']}"`);
    input.maxIterations = n;
  }
  if (values['max-time'] !== undefined) {
    try {
      parseDuration(values['max-time']);
    } catch (err) {
      throw new UsageError(`--max-time: ${(err as Error).message}`);
    }
    input.maxExecutionTime = values['max-time'];
  }
  if (values['on-limit'] !== undefined) {
    if (values['on-limit'] !== 'stop' && values['on-limit'] !== 'generate') throw new UsageError(`--on-limit must be "stop" or "generate", got "${values['on-limit']}"`);
    input.onLimit = values['on-limit'];
  }
  if (values.id !== undefined && !values.id.trim()) throw new UsageError('--id must not be empty');
  const problems = validateAgentInput(input);
  if (problems.length) throw new UsageError(problems.join('; '));
  return { input, workflowId: values.id, json: values.json ?? false };
}

function toolList(flag: string, raw: string, registered: readonly string[]): string[] {
  const names = raw.split(',').map((s) => s.trim()).filter(Boolean);
  if (names.length === 0) throw new UsageError(`${flag} needs at least one tool name`);
  const unknown = names.filter((n) => !registered.includes(n));
  if (unknown.length) throw new UsageError(`${flag}: unknown tool${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')} (available: ${registered.join(', ')})`);
  return [...new Set(names)];
}
