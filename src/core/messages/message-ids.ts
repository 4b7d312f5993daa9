/**
 * Messages by the id their sender gave them (`TurnInput.messageId`: a UI message's id, an
 * `Idempotency-Key`): the same message sent twice (a client that retried, an Update that a worker
 * accepted after the same message was queued as a Signal) is answered once. Pure: the conversation
 * workflow asks, and carries what is remembered across continue-as-new.
 */

/** The longest message id accepted. */
export const MAX_MESSAGE_ID_CHARS = 200;

/** How many answered message ids a conversation remembers (the newest), across continue-as-new too. */
export const REMEMBERED_MESSAGE_IDS = 200;

/** What is wrong with a message id, or undefined (absent is fine: the message has none). */
export function messageIdProblem(id: unknown): string | undefined {
  if (id === undefined) return undefined;
  if (typeof id !== 'string' || id === '' || id.length > MAX_MESSAGE_ID_CHARS)
    return `"messageId" must be a string of 1-${MAX_MESSAGE_ID_CHARS} characters`;
  if (/[\u0000-\u001f\u007f]/.test(id)) return '"messageId" must not contain control characters';
  return undefined;
}

/** What a conversation remembers of answered messages (its state has it: `ConversationState.answeredMessages`). */
export interface AnsweredMessages {
  answeredMessages?: Array<[string, number]>;
}

/** The turn that answered the message with this id, when the conversation remembers it. */
export function answeredTurnOf(conv: AnsweredMessages, id: string | undefined): number | undefined {
  if (id === undefined) return undefined;
  return conv.answeredMessages?.find(([answered]) => answered === id)?.[1];
}

/** The conversation, remembering that `turn` answered the message `id` (the oldest forgotten past the bound). */
export function withAnsweredMessage<C extends AnsweredMessages>(conv: C, id: string | undefined, turn: number): C {
  if (id === undefined) return conv;
  const kept = (conv.answeredMessages ?? []).filter(([answered]) => answered !== id);
  return { ...conv, answeredMessages: [...kept, [id, turn] as [string, number]].slice(-REMEMBERED_MESSAGE_IDS) };
}

/**
 * Whether the message id a turn answers (`turn_started.messageId`) is `id`, or a fork of it: a
 * regenerated or edited message is sent as `<id>~<suffix>` (the message it answers again keeps
 * its id on the page, and each fork is a new message to the conversation).
 */
export function answersMessage(answered: string | undefined, id: string): boolean {
  return answered !== undefined && (answered === id || answered.startsWith(`${id}~`));
}
