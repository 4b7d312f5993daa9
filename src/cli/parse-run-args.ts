import { validateAgentInput, workflowIdProblem } from '../core/run/run-input';
import type { AgentInput } from '../core/state/run-options';
import {
  durationMs,
  IMAGE_FLAG,
  parseFlags,
  RUN_OPTION_FLAGS,
  runOptionsFromFlags,
  UsageError,
  WAIT_FLAG,
} from './option-flags';
import { commandName } from './command-name';

export { UsageError } from './option-flags';

/** The usage line of `run`. */
export const RUN_USAGE =
  `usage: ${commandName()} run "<message>" [--agent name] [--tools a,b] [--immediate a] [--needs-approval a] [--approval-timeout 1h [--on-approval-timeout reject|approve|escalate]] [--max-iterations N] ` +
  '[--max-time 30s] [--model-timeout 5m] [--on-limit stop|generate] [--system "..."] [--tool-calling tools|functions|react] [--no-stream] [--budget-tokens N] [--budget-usd X] [--on-budget stop|wrap_up] [--max-wait 30d] [--waits-count] [--image <file or URL>]... [--id <workflowId>] [--wait 2m] [--json | --events]';

/** A parsed `run` command. */
export interface RunCommand {
  input: AgentInput;
  workflowId?: string;
  /** Stop waiting for the result after this many ms. */
  waitMs?: number;
  json: boolean;
  /** Print the run's events as JSON lines (instead of text, or one JSON object). */
  events: boolean;
  /** `--image`: files or URLs sent with the message (read when the run starts). */
  images?: string[];
}

/**
 * Parses `run` arguments. Every value is checked here (numbers, durations, tool names) so a typo
 * never starts a workflow.
 */
export function parseRunArgs(argv: string[], registeredTools: readonly string[] | undefined): RunCommand {
  const { values, positionals } = parseFlags(argv, {
    ...RUN_OPTION_FLAGS,
    ...WAIT_FLAG,
    ...IMAGE_FLAG,
    id: { type: 'string' },
    json: { type: 'boolean', default: false },
    events: { type: 'boolean', default: false },
  });
  if (values.json && values.events)
    throw new UsageError(
      '--json and --events exclude each other: --json prints one final object, --events one JSON line per event',
    );
  if (positionals.length !== 1)
    throw new UsageError(
      positionals.length === 0
        ? 'missing the message to send'
        : `expected one message, got ${positionals.length} arguments (quote the message)`,
    );
  const input: AgentInput = { message: positionals[0], ...runOptionsFromFlags(values, registeredTools) };
  const idProblem = values.id === undefined ? undefined : workflowIdProblem(values.id, '--id');
  if (idProblem) throw new UsageError(idProblem);
  const problems = validateAgentInput(input);
  if (problems.length) throw new UsageError(problems.join('; '));
  const command: RunCommand = { input, json: values.json ?? false, events: values.events ?? false };
  if (values.id !== undefined) command.workflowId = values.id;
  if (values.wait !== undefined) command.waitMs = durationMs('--wait', values.wait);
  if (values.image?.length) command.images = values.image;
  return command;
}
