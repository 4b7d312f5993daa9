import { readFileSync } from 'node:fs';
import {
  agentListFilterProblem,
  busyPolicyProblem,
  type BusyPolicy,
  eventProblem,
  validateConversationOptions,
  workflowIdProblem,
  type ConversationOptions,
  eventIdProblem,
} from '../core';
import {
  duration,
  durationMs,
  IMAGE_FLAG,
  parseFlags,
  RUN_OPTION_FLAGS,
  RUN_OPTION_HELP,
  runOptionsFromFlags,
  UsageError,
  WAIT_FLAG,
  wholeNumber,
} from './option-flags';

/** The `--help` lines of the options that apply when a conversation starts. */
export const CONVERSATION_OPTION_HELP = `${RUN_OPTION_HELP}
  --memory N             a window of the last N messages instead of memory by tokens (min 3)
  --idle-timeout 24h     close the conversation after this long without a message
  --busy steer           what a message does while a turn runs: enqueue (default), reject, interrupt, steer`;

/** A parsed conversation command. Options only apply when the command starts the conversation. */
export type ConversationCommand =
  | { kind: 'chat'; conversationId?: string; options: ConversationOptions; json: boolean }
  | {
      kind: 'send';
      conversationId: string;
      message: string;
      /** `--image`: files or URLs sent with the message. */
      images?: string[];
      options: ConversationOptions;
      noWait: boolean;
      waitMs?: number;
      json: boolean;
    }
  | { kind: 'history'; conversationId: string; branch?: string; json: boolean }
  | { kind: 'status' | 'cancel' | 'end'; conversationId: string; json: boolean }
  | {
      kind: 'fork';
      conversationId: string;
      /** The transcript index of the user message the fork replaces. */
      atMessage: number;
      /** Absent: the same message again (regenerate). */
      message?: string;
      into?: string;
      branch?: string;
      json: boolean;
    }
  | { kind: 'branches'; conversationId: string; switchTo?: string; json: boolean }
  | { kind: 'approve' | 'reject'; conversationId: string; callId: string; reason?: string; json: boolean }
  | { kind: 'event'; conversationId: string; name: string; payload: unknown; eventId?: string; json: boolean }
  | { kind: 'agents'; json: boolean }
  | {
      kind: 'list';
      status?: string;
      agent?: string;
      agentVersion?: string;
      tenant?: string;
      query?: string;
      limit: number;
      json: boolean;
    };

const COMMANDS = [
  'chat',
  'send',
  'history',
  'fork',
  'branches',
  'status',
  'cancel',
  'end',
  'approve',
  'reject',
  'event',
  'agents',
  'list',
] as const;

/** Whether `command` is a conversation command. */
export function isConversationCommand(command: string): command is ConversationCommand['kind'] {
  return (COMMANDS as readonly string[]).includes(command);
}

const OPTION_FLAGS = {
  ...RUN_OPTION_FLAGS,
  memory: { type: 'string' },
  'idle-timeout': { type: 'string' },
  busy: { type: 'string' },
} as const;
const JSON_FLAG = { json: { type: 'boolean', default: false } } as const;

/** Parses a conversation command; every mistake is a {@link UsageError} before anything connects. */
export function parseConversationArgs(
  command: ConversationCommand['kind'],
  argv: string[],
  registeredTools: readonly string[] | undefined,
): ConversationCommand {
  switch (command) {
    case 'chat': {
      const { values, positionals } = parseFlags(argv, {
        ...OPTION_FLAGS,
        ...JSON_FLAG,
        conversation: { type: 'string' },
      });
      expectPositionals(command, positionals, []);
      const idProblem =
        values.conversation === undefined ? undefined : workflowIdProblem(values.conversation, '--conversation');
      if (idProblem) throw new UsageError(idProblem);
      return {
        kind: 'chat',
        conversationId: values.conversation,
        options: conversationOptions(values, registeredTools),
        json: values.json ?? false,
      };
    }
    case 'send': {
      const { values, positionals } = parseFlags(argv, {
        ...OPTION_FLAGS,
        ...JSON_FLAG,
        ...WAIT_FLAG,
        ...IMAGE_FLAG,
        'no-wait': { type: 'boolean', default: false },
      });
      const [conversationId, message] = expectPositionals(command, positionals, ['<id>', '"<message>"']);
      if (values['no-wait'] && values.wait !== undefined)
        throw new UsageError('--no-wait and --wait exclude each other');
      const send: ConversationCommand = {
        kind: 'send',
        conversationId,
        message,
        options: conversationOptions(values, registeredTools),
        noWait: values['no-wait'] ?? false,
        json: values.json ?? false,
      };
      if (values.wait !== undefined) send.waitMs = durationMs('--wait', values.wait);
      if (values.image?.length) send.images = values.image;
      return send;
    }
    case 'approve':
    case 'reject': {
      const { values, positionals } = parseFlags(argv, {
        ...JSON_FLAG,
        reason: { type: 'string' },
      });
      const [conversationId, callId] = expectPositionals(command, positionals, ['<id>', '<callId>']);
      const reason = (values as { reason?: string }).reason;
      return { kind: command, conversationId, callId, ...(reason ? { reason } : {}), json: values.json ?? false };
    }
    case 'event': {
      const { values, positionals } = parseFlags(argv, { ...JSON_FLAG, 'event-id': { type: 'string' } });
      if (positionals.length !== 2 && positionals.length !== 3)
        throw new UsageError(
          `event expects <id> <name> and an optional JSON payload, got ${positionals.length === 0 ? 'none' : positionals.map((p) => JSON.stringify(p)).join(' ')}`,
        );
      const [conversationId, name] = expectPositionals(command, positionals.slice(0, 2), ['<id>', '<name>']);
      const problem = eventProblem(name, null);
      if (problem) throw new UsageError(problem);
      const payload = positionals.length === 3 ? eventPayload(positionals[2]) : null;
      const sizeProblem = eventProblem(name, payload);
      if (sizeProblem) throw new UsageError(sizeProblem);
      const eventId = values['event-id'];
      const idProblem = eventId === undefined ? undefined : eventIdProblem(eventId);
      if (idProblem) throw new UsageError(`--event-id: ${idProblem}`);
      return {
        kind: 'event',
        conversationId,
        name,
        payload,
        ...(eventId !== undefined ? { eventId } : {}),
        json: values.json ?? false,
      };
    }
    case 'history': {
      const { values, positionals } = parseFlags(argv, { ...JSON_FLAG, branch: { type: 'string' } });
      const [conversationId] = expectPositionals(command, positionals, ['<id>']);
      const branch = nonEmpty('--branch', values.branch);
      return { kind: 'history', conversationId, ...(branch ? { branch } : {}), json: values.json ?? false };
    }
    case 'fork': {
      const { values, positionals } = parseFlags(argv, {
        ...JSON_FLAG,
        into: { type: 'string' },
        branch: { type: 'string' },
      });
      if (positionals.length !== 2 && positionals.length !== 3)
        throw new UsageError(
          `fork expects <id> <message index> and an optional "<message>" (absent: the same message again), got ${positionals.length === 0 ? 'none' : positionals.map((p) => JSON.stringify(p)).join(' ')}`,
        );
      const [conversationId] = expectPositionals(command, positionals.slice(0, 1), ['<id>']);
      const atMessage = wholeNumber('<message index>', positionals[1], 0);
      const message = positionals[2];
      if (message !== undefined && !message.trim()) throw new UsageError('fork: "<message>" must not be empty');
      const into = nonEmpty('--into', values.into);
      const branch = nonEmpty('--branch', values.branch);
      if (into !== undefined) {
        const problem = workflowIdProblem(into, '--into');
        if (problem) throw new UsageError(problem);
      }
      if (branch !== undefined && into === undefined)
        throw new UsageError(
          '--branch names the branch to fork from into a new conversation: give --into <new id> too',
        );
      return {
        kind: 'fork',
        conversationId,
        atMessage,
        ...(message !== undefined ? { message } : {}),
        ...(into ? { into } : {}),
        ...(branch ? { branch } : {}),
        json: values.json ?? false,
      };
    }
    case 'branches': {
      const { values, positionals } = parseFlags(argv, { ...JSON_FLAG, switch: { type: 'string' } });
      const [conversationId] = expectPositionals(command, positionals, ['<id>']);
      const switchTo = nonEmpty('--switch', values.switch);
      return { kind: 'branches', conversationId, ...(switchTo ? { switchTo } : {}), json: values.json ?? false };
    }
    case 'agents': {
      const { values, positionals } = parseFlags(argv, JSON_FLAG);
      expectPositionals(command, positionals, []);
      return { kind: 'agents', json: values.json ?? false };
    }
    case 'list': {
      const { values, positionals } = parseFlags(argv, {
        ...JSON_FLAG,
        status: { type: 'string' },
        agent: { type: 'string' },
        version: { type: 'string' },
        tenant: { type: 'string' },
        query: { type: 'string' },
        limit: { type: 'string' },
      });
      expectPositionals(command, positionals, []);
      const problem = agentListFilterProblem({
        status: values.status,
        agent: values.agent,
        agentVersion: values.version,
        tenant: values.tenant,
        query: values.query,
      });
      if (problem) throw new UsageError(problem);
      const list: ConversationCommand = {
        kind: 'list',
        limit: values.limit === undefined ? 20 : wholeNumber('--limit', values.limit, 1),
        json: values.json ?? false,
      };
      if (values.status !== undefined) list.status = values.status;
      if (values.agent !== undefined) list.agent = values.agent;
      if (values.version !== undefined) list.agentVersion = values.version;
      if (values.tenant !== undefined) list.tenant = values.tenant;
      if (values.query !== undefined) list.query = values.query;
      return list;
    }
    default: {
      const { values, positionals } = parseFlags(argv, JSON_FLAG);
      const [conversationId] = expectPositionals(command, positionals, ['<id>']);
      return { kind: command, conversationId, json: values.json ?? false };
    }
  }
}

/** A flag's value, which must not be empty when given. */
function nonEmpty(flag: string, value: string | undefined): string | undefined {
  if (value !== undefined && !value.trim()) throw new UsageError(`${flag} must not be empty`);
  return value;
}

/** An event's payload: JSON on the command line, or `@file` (JSON read from the file). */
function eventPayload(raw: string): unknown {
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

function expectPositionals(command: string, positionals: string[], names: string[]): string[] {
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

function conversationOptions(
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
