import { readFileSync } from 'node:fs';
import { busyPolicyProblem, type BusyPolicy } from '../../core/conversation/busy';
import { validateConversationOptions } from '../../core/conversation/conversation';
import { workflowIdProblem } from '../../core/run/run-input';
import type { ConversationOptions } from '../../core/conversation/conversation-state';
import {
  duration,
  parseFlags,
  RUN_OPTION_FLAGS,
  RUN_OPTION_HELP,
  runOptionsFromFlags,
  UsageError,
  wholeNumber,
} from '../option-flags';

/**
 * What the conversation commands (and those on any run or conversation) share in reading their
 * arguments; each command's own module (`<name>-command.ts` here) reads the rest.
 */

/** The `--help` lines of the options that apply when a conversation starts. */
export const CONVERSATION_OPTION_HELP = `${RUN_OPTION_HELP}
  --memory N             a window of the last N messages instead of memory by tokens (min 3)
  --idle-timeout 24h     close the conversation after this long without a message
  --busy steer           what a message does while a turn runs: enqueue (default), reject, interrupt, steer`;

/** The flags of the options that apply when a conversation starts. */
export const OPTION_FLAGS = {
  ...RUN_OPTION_FLAGS,
  memory: { type: 'string' },
  'idle-timeout': { type: 'string' },
  busy: { type: 'string' },
} as const;

/** `--json`. */
export const JSON_FLAG = { json: { type: 'boolean', default: false } } as const;

/** A command on one workflow by id, with `--json` only (`status`, `cancel`, `end`). */
export interface IdCommand {
  conversationId: string;
  json: boolean;
}

/** Reads `<id> [--json]`. */
export function parseIdCommand(command: string, argv: string[]): IdCommand {
  const { values, positionals } = parseFlags(argv, JSON_FLAG);
  const [conversationId] = expectPositionals(command, positionals, ['<id>']);
  return { conversationId, json: values.json ?? false };
}

/** A flag's value, which must not be empty when given. */
export function nonEmpty(flag: string, value: string | undefined): string | undefined {
  if (value !== undefined && !value.trim()) throw new UsageError(`${flag} must not be empty`);
  return value;
}

/** An event's payload: JSON on the command line, or `@file` (JSON read from the file). */
export function eventPayload(raw: string): unknown {
  let text = raw;
  if (raw.startsWith('@')) {
    try {
      text = readFileSync(raw.slice(1), 'utf8');
    } catch (err) {
      throw new UsageError(
        `event: cannot read ${raw.slice(1)}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      );
    }
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new UsageError(
      `event: the payload is not JSON (${JSON.stringify(text.slice(0, 40))}); quote it, e.g. '{"amount":42}', or give @file.json`,
    );
  }
}

/** The positional arguments, exactly `names` of them: ids checked as ids, the rest not empty. */
export function expectPositionals(command: string, positionals: string[], names: string[]): string[] {
  if (positionals.length !== names.length) {
    const wanted = names.length ? names.join(' ') : 'no arguments';
    throw new UsageError(
      `${command} expects ${wanted}, got ${positionals.length === 0 ? 'none' : positionals.map((p) => JSON.stringify(p)).join(' ')}`,
    );
  }
  positionals.forEach((p, i) => {
    const problem =
      names[i] === '<id>'
        ? workflowIdProblem(p, `${command}: <id>`)
        : p.trim()
          ? undefined
          : `${command}: ${names[i]} must not be empty`;
    if (problem) throw new UsageError(problem);
  });
  return positionals;
}

/** The conversation's options from its flags, checked as the workflow checks them. */
export function conversationOptions(
  values: Record<string, string | string[] | boolean | undefined>,
  registeredTools: readonly string[] | undefined,
): ConversationOptions {
  const options: ConversationOptions = runOptionsFromFlags(values, registeredTools);
  if (typeof values.memory === 'string') options.memoryWindow = wholeNumber('--memory', values.memory, 3);
  if (typeof values['idle-timeout'] === 'string')
    options.idleTimeout = duration('--idle-timeout', values['idle-timeout']);
  if (typeof values.busy === 'string') {
    const problem = busyPolicyProblem(values.busy);
    if (problem) throw new UsageError(`--busy: ${problem.replace('"busy" ', '')}`);
    options.busy = values.busy as BusyPolicy;
  }
  const problems = validateConversationOptions(options);
  if (problems.length) throw new UsageError(problems.join('; '));
  return options;
}
