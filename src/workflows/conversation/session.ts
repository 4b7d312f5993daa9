import type { CancellationScope } from '@temporalio/workflow';
import { isInstructions } from '../../core/context/compaction';
import { runMessages, type CloseReason } from '../../core/conversation/conversation-status';
import { startConversation } from '../../core/conversation/conversation';
import type { ChatMessage } from '../../core/messages/chat-message';
import type { ConversationInput, ConversationState, TurnInput } from '../../core/conversation/conversation-state';
import type { RunRef } from '../run-context';

/** A message waiting for its turn. */
export interface QueuedTurn {
  seq: number;
  input: TurnInput;
  /** An Update waits for the result; a Signal does not. */
  reply: boolean;
  /** Messages sent with `busy: "steer"` that joined this message's turn: its result answers them too. */
  joined?: QueuedTurn[];
  /** Steering messages its turn ended before taking: they are answered next, each in a turn of its own. */
  leftover?: QueuedTurn[];
}

/** The turn running now. */
export interface ActiveTurn {
  turn: number;
  /** The message it answers. */
  queued: QueuedTurn;
  run: RunRef;
  scope: CancellationScope;
  interruption?: 'cancelled' | 'time_limit';
  /** Messages sent with `busy: "steer"`, waiting for the turn's next model call. */
  steering: QueuedTurn[];
  /** What the model had written when the turn was stopped mid-call. */
  partial?: string;
}

/**
 * A conversation workflow's state in one place: what the core keeps between turns (`conv`), the
 * turn running now, and how the conversation is ending. Handlers, the turn and the loop read and
 * change it here, and nowhere else.
 */
export class ConversationSession {
  conv: ConversationState;
  active?: ActiveTurn;
  /** Set by `end` (or the idle timeout): validators refuse new messages from then on. */
  ending = false;
  closeReason?: CloseReason;
  /** Why the conversation could not start (its agent or tools could not be resolved). */
  startFailure?: { error: string; errorType: string };
  /** Worker Versioning: a nudge (`deploy promote`) asked an idle conversation to check its build now. */
  moveAsked = false;
  /** The model calls of the last turn (the search attributes show them between turns). */
  lastTurnIterations = 0;

  constructor(input: ConversationInput) {
    this.conv = startConversation(input);
  }

  /** Stops the running turn (a `cancelTurn`, or a message sent with `busy: "interrupt"`). */
  interrupt(): number | undefined {
    const turn = this.active;
    if (!turn) return undefined;
    turn.interruption = 'cancelled';
    turn.scope.cancel();
    return turn.turn;
  }

  /** The run the handlers act on now, with its turn (none between turns). */
  current(): { run: RunRef; turn: number } | undefined {
    return this.active;
  }

  /** The current branch's messages this run holds, the running turn's included (system message excluded). */
  held(): ChatMessage[] {
    const all = runMessages(this.conv, this.active?.run.state);
    return isInstructions(all[0]) ? all.slice(1) : all;
  }

  /** The turn events go to between turns: the last one. */
  lastTurn(): number {
    return Math.max(1, this.conv.turns);
  }
}
