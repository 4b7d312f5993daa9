import { eventIdProblem, eventProblem } from '../../core/time/durable-waits';
import { deliverEvent } from '../../client/deliver-event';
import type { CommandContext } from '../command';
import { parseFlags, UsageError } from '../option-flags';
import { commandSession } from './command-session';
import { eventPayload, expectPositionals, JSON_FLAG } from './conversation-args';

/** `event <id> <name> [<JSON payload> | @file] [--event-id <id>] [--json]`. */
export interface EventCommand {
  conversationId: string;
  name: string;
  payload: unknown;
  eventId?: string;
  json: boolean;
}

/** `event`'s arguments, every mistake a `UsageError` before anything connects. */
export function parse(argv: string[]): EventCommand {
  const { values, positionals } = parseFlags(argv, { ...JSON_FLAG, 'event-id': { type: 'string' } });
  if (positionals.length !== 2 && positionals.length !== 3)
    throw new UsageError(
      `event expects <id> <name> and an optional JSON payload, got ${positionals.length === 0 ? 'none' : positionals.map((p) => JSON.stringify(p)).join(' ')}`,
    );
  const [conversationId, name] = expectPositionals('event', positionals.slice(0, 2), ['<id>', '<name>']);
  const problem = eventProblem(name, null);
  if (problem) throw new UsageError(problem);
  const payload = positionals.length === 3 ? eventPayload(positionals[2]) : null;
  const sizeProblem = eventProblem(name, payload);
  if (sizeProblem) throw new UsageError(sizeProblem);
  const eventId = values['event-id'];
  const idProblem = eventId === undefined ? undefined : eventIdProblem(eventId);
  if (idProblem) throw new UsageError(`--event-id: ${idProblem}`);
  return { conversationId, name, payload, ...(eventId !== undefined ? { eventId } : {}), json: values.json ?? false };
}

/** Delivers the event to the run or conversation: a `wait_for_event` for it gets the payload. */
export function run(cmd: EventCommand, context: CommandContext): Promise<number> {
  return commandSession(context, { json: cmd.json }, async ({ client, print }) => {
    const r = await deliverEvent(
      client,
      cmd.conversationId,
      cmd.name,
      cmd.payload,
      cmd.eventId !== undefined ? { eventId: cmd.eventId } : {},
    );
    print(
      r,
      `Delivered ${r.name} to the ${r.kind} ${r.workflowId}; a wait_for_event for it gets the payload (it is kept until one waits)${r.eventId !== undefined ? `; a repeat of event id ${r.eventId} is dropped` : ''}`,
    );
    return 0;
  });
}
