import { ApplicationFailure, condition, log, setHandler, workflowInfo } from '@temporalio/workflow';
import { answeredTurnOf } from '../../core/messages/message-ids';
import { busyAction, busyPolicyOf } from '../../core/conversation/busy';
import { forkIndex } from '../../core/conversation/branches';
import { rejectMessage, turnProblem } from '../../core/conversation/conversation';
import type { ConversationTurnResult } from '../../core/state/run-results';
import type { TurnInput } from '../../core/conversation/conversation-state';
import { queueMessageSignal, sendMessageUpdate } from '../../contracts/definitions';
import type { ConversationSession, QueuedTurn } from './session';

/** How many answers of messages with an id a conversation keeps for the same message sent again. */
const RECENT_RESULTS = 5;

/**
 * A conversation's messages: the `sendMessage` Update (which waits for its turn's result) and the
 * `queueMessage` Signal (which does not) queue them for their turns, in arrival order. A message
 * sent twice by its id (a client's retry; an Update a worker accepted after the same message was
 * queued as a Signal while none answered) is answered once.
 */
export class MessageQueue {
  private readonly queue: QueuedTurn[] = [];
  private readonly results = new Map<number, ConversationTurnResult>();
  /** Why messages whose turn could not start were refused then (see {@link refused}). */
  private readonly refusals = new Map<number, string>();
  /** The results of the latest turns that answered a message with an id, for the same message sent again. */
  private readonly recent = new Map<string, ConversationTurnResult>();
  private nextSeq = 0;

  constructor(private readonly session: ConversationSession) {
    setHandler(sendMessageUpdate, (turn) => this.send(turn), {
      validator: (turn) =>
        throwIf(turnProblem(turn, session.conv.tools, session.ending) ?? this.refusal(turn) ?? this.forkRefusal(turn)),
    });
    setHandler(queueMessageSignal, (turn) => this.queueSignalled(turn));
  }

  /** How many messages wait. */
  get length(): number {
    return this.queue.length;
  }

  /** The next message, whose turn comes now. */
  next(): QueuedTurn | undefined {
    return this.queue.shift();
  }

  /** Messages answered next, before those waiting (steering messages a turn ended before taking). */
  putFirst(messages: readonly QueuedTurn[]): void {
    this.queue.unshift(...messages);
  }

  /** A message's turn ended: an Update waiting for it gets the result, as do messages that joined the turn. */
  answered(queued: QueuedTurn, result: ConversationTurnResult): void {
    for (const q of [queued, ...(queued.joined ?? [])]) {
      // Read after the turn: an Update may have joined a signalled message while it ran.
      if (q.reply) this.results.set(q.seq, result);
      const id = q.input.messageId;
      if (id === undefined) continue;
      this.recent.set(id, result);
      if (this.recent.size > RECENT_RESULTS) this.recent.delete(this.recent.keys().next().value!);
    }
  }

  /**
   * A message's turn cannot start: its fork point is gone (e.g. another fork came first). An
   * Update waiting for it hears why; a signalled one is counted as rejected.
   */
  refused(queued: QueuedTurn, problem: string): void {
    if (queued.reply) this.refusals.set(queued.seq, problem);
    else this.session.conv = rejectMessage(this.session.conv, problem);
  }

  /** Why a fork cannot start where it asks, as the conversation is now (the running turn's messages included). */
  private forkRefusal(turn: TurnInput): string | undefined {
    if (!turn.fork) return undefined;
    const conv = { ...this.session.conv, messages: this.session.held() };
    const found = forkIndex(conv, turn.fork, workflowInfo().workflowId);
    return 'problem' in found ? found.problem : undefined;
  }

  /** Why a message is refused by its busy policy (`reject` while a turn runs), or undefined. */
  private refusal(turn: TurnInput): string | undefined {
    const { session } = this;
    const action = busyAction(busyPolicyOf(turn, session.conv.options.busy), session.active?.turn, this.queue.length);
    return action.kind === 'refuse' ? action.problem : undefined;
  }

  /**
   * Places a message by its busy policy (see `BUSY_POLICIES`): in the queue; first in it, with the
   * running turn stopped (`interrupt`); or into the running turn (`steer`). Returns its `seq`.
   */
  private place(turn: TurnInput, reply: boolean): number {
    const { session } = this;
    const action = busyAction(busyPolicyOf(turn, session.conv.options.busy), session.active?.turn, this.queue.length);
    // A fork starts a turn of its own: under a conversation's default "steer" it waits for its turn.
    if (action.kind === 'steer' && !turn.fork) {
      session.active!.steering.push({ seq: this.nextSeq, input: turn, reply });
      return this.nextSeq++;
    }
    if (action.kind === 'interrupt') {
      this.queue.unshift({ seq: this.nextSeq, input: turn, reply });
      session.interrupt();
      return this.nextSeq++;
    }
    return this.enqueue(turn, reply);
  }

  private async send(turn: TurnInput): Promise<ConversationTurnResult> {
    const { session } = this;
    // With update-with-start the message can arrive before the tools are resolved; check it again then.
    await condition(() => session.conv.tools !== undefined || session.startFailure !== undefined);
    // The conversation could not start (e.g. no such agent): the message that started it says why.
    if (session.startFailure)
      throw ApplicationFailure.nonRetryable(session.startFailure.error, session.startFailure.errorType);
    const problem = turnProblem(turn, session.conv.tools, session.ending);
    if (problem) throw ApplicationFailure.nonRetryable(problem, 'Conversation.InvalidMessage');
    // Busy by now (the conversation started while this message waited for its agent): its policy still holds.
    const refused = this.refusal(turn);
    if (refused) throw ApplicationFailure.nonRetryable(refused, 'Conversation.Busy');
    const same = this.same(turn.messageId);
    if (same && 'answeredIn' in same) {
      const kept = this.recent.get(turn.messageId!);
      if (kept) return kept;
      throw ApplicationFailure.nonRetryable(
        `the message "${turn.messageId}" was answered already, in turn ${same.answeredIn}: read that turn in the conversation's history`,
        'Conversation.DuplicateMessage',
      );
    }
    // Queued (or running) already: this Update waits for its answer instead of sending it again.
    if (same) same.entry.reply = true;
    const seq = same ? same.entry.seq : this.place(turn, true);
    await condition(() => this.results.has(seq) || this.refusals.has(seq));
    const refusal = this.refusals.get(seq);
    if (refusal !== undefined) {
      this.refusals.delete(seq);
      throw ApplicationFailure.nonRetryable(refusal, 'Conversation.InvalidMessage');
    }
    const result = this.results.get(seq)!;
    this.results.delete(seq);
    return result;
  }

  private queueSignalled(turn: TurnInput): void {
    const { session } = this;
    // A signal cannot be refused: an invalid one is dropped, counted and shown in the status query.
    const problem =
      turnProblem(turn, session.conv.tools, session.ending) ?? this.refusal(turn) ?? this.forkRefusal(turn);
    if (problem) {
      log.warn('dropped an invalid queued message', { problem });
      session.conv = rejectMessage(session.conv, problem);
    } else if (this.same(turn.messageId))
      log.info('a message sent again is answered once', { messageId: turn.messageId });
    else this.place(turn, false);
  }

  private enqueue(input: TurnInput, reply: boolean): number {
    this.queue.push({ seq: this.nextSeq, input, reply });
    return this.nextSeq++;
  }

  /** A message with this id, if the conversation has it already: queued or running (its entry), or answered (its turn). */
  private same(id: string | undefined): { entry: QueuedTurn } | { answeredIn: number } | undefined {
    if (id === undefined) return undefined;
    const { active, conv } = this.session;
    const entry =
      this.queue.find((q) => q.input.messageId === id) ??
      active?.steering.find((q) => q.input.messageId === id) ??
      active?.queued.joined?.find((q) => q.input.messageId === id) ??
      (active?.queued.input.messageId === id ? active.queued : undefined);
    if (entry) return { entry };
    const answeredIn = answeredTurnOf(conv, id);
    return answeredIn === undefined ? undefined : { answeredIn };
  }
}

/** A validator's refusal: an error with the sentence, or nothing. */
export function throwIf(problem: string | undefined): void {
  if (problem) throw new Error(problem);
}
