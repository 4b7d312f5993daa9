import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import type { Client } from '@temporalio/client';
import type { ConversationOptions, TurnInput } from '../core/conversation/conversation-state';
import type { ConversationTurnResult } from '../core/state/run-results';
import { decideApproval } from '../client/workflow-controls';
import { cancelTurn, endConversation, startMessage } from '../client/conversations';
import { turnJson, turnText } from './format-conversation';
import { onInterrupt } from './interrupt';
import { startOnlyWarning } from './option-flags';
import { retryText, watchProgress } from './progress';
import { EventPrinter } from './event-printer';
import { eventsPosition, isTurnEnd } from '../client/event-stream';
import { streamLiveEvents } from '../client/live-events';
import { hintCommand } from './command-name';

/** Where a chat reads the person's lines and writes answers, notes and prompts. */
export interface ChatIO {
  input: Readable;
  /** Answers and (in text mode) prompts. */
  out: (text: string) => void;
  /** Progress and hints: stdout in text mode, stderr with `--json`. */
  note: (line: string) => void;
  /** Writes a prompt without a newline. */
  prompt: (text: string) => void;
}

/**
 * An interactive chat on one conversation. While a turn runs it polls the conversation and shows
 * what the agent does (model calls, retries of failed ones, tool calls with their arguments) and
 * asks inline for approvals; after the turn it lists any tool call too quick to be seen. Ctrl+C
 * during a turn cancels the turn and returns to the prompt; at the prompt a first press says how
 * to leave and a second leaves (the conversation stays open).
 */
export async function chat(options: ChatOptions): Promise<void> {
  const { client, conversationId, io, uiLink } = options;
  const rl = createInterface({ input: io.input, terminal: false });
  const lines = rl[Symbol.asyncIterator]();
  const ask = async (prompt: string): Promise<string | undefined> => {
    io.prompt(prompt);
    const next = await lines.next();
    return next.done ? undefined : String(next.value);
  };
  const presses = new ChatInterrupts(
    io,
    () => rl.close(),
    () => cancelTurn(client, conversationId),
  );
  const offInterrupt = onInterrupt(() => presses.press());
  io.note(`Conversation ${conversationId}${uiLink ? ` (${uiLink})` : ''}`);
  io.note('Type a message. /end closes the conversation; /quit (or Ctrl+D) leaves it open for later:');
  io.note(`  ${hintCommand()} chat --conversation ${conversationId}`);
  const turns = { warned: false };
  try {
    for (;;) {
      const line = await ask('you> ');
      if (line === undefined || line.trim() === '/quit') break;
      if (line.trim() === '/end') {
        const closed = await endConversation(client, conversationId);
        io.note(`Conversation ended after ${closed.turns} turn${closed.turns === 1 ? '' : 's'}.`);
        break;
      }
      if (!line.trim()) continue;
      presses.turnStarted();
      try {
        await chatTurn(options, line, ask, turns);
      } catch (err) {
        io.note(`error: ${err instanceof Error ? err.message : String(err)}`);
      } finally {
        presses.turnEnded();
      }
    }
  } finally {
    offInterrupt();
    rl.close();
  }
}

/** What {@link chat} needs. */
export interface ChatOptions {
  client: Client;
  conversationId: string;
  start: { taskQueue: string; options: ConversationOptions };
  io: ChatIO;
  json: boolean;
  uiLink: string | undefined;
  /** Runs a turn with its Temporal calls cancellable when the session closes (see Session.scoped). */
  scoped: <T>(work: () => Promise<T>) => Promise<T>;
}

/** One turn of the chat: the message sent, the turn followed as it runs, its answer printed. */
async function chatTurn(
  { client, conversationId, start, io, json, scoped }: ChatOptions,
  line: string,
  ask: (prompt: string) => Promise<string | undefined>,
  state: { warned: boolean },
): Promise<void> {
  // Per-message options reach an open conversation too; the others only apply when it starts.
  const perTurn: Omit<TurnInput, 'message'> = {};
  if (start.options.tools) perTurn.tools = start.options.tools;
  if (start.options.approvalTools) perTurn.approvalTools = start.options.approvalTools;
  if (start.options.busy) perTurn.busy = start.options.busy;
  const result = await scoped(async () => {
    // Events from here on: this turn's (a closed or new conversation starts at 0).
    const after = await eventsPosition(client, conversationId).catch(() => -1);
    const sent = await startMessage(client, conversationId, { message: line, ...perTurn }, start);
    if (sent.wasOpen && !state.warned) {
      state.warned = true;
      const warning = startOnlyWarning(conversationId, start.options);
      if (warning) io.note(warning);
    }
    return followTurn(client, conversationId, line, after, sent.result(), io, ask, json);
  });
  if (json) io.out(JSON.stringify(turnJson(result.turn)));
  else if (!result.answerShown) io.out(`agent> ${turnText(result.turn)}`);
}

/**
 * What Ctrl+C does in a chat: it cancels a running turn and keeps the session, always. A press
 * can reach this process twice (the terminal's, and the copy npm relays), the copy late on a busy
 * machine, so at the prompt one press only says how to leave; a second within LEAVE_WINDOW_MS
 * leaves, and the late copy of the press that cancelled a turn is ignored.
 */
class ChatInterrupts {
  private turnRunning = false;
  private cancelling = false;
  /** Presses while the turn was being cancelled: one means the copy npm (or tsx) relays may still come. */
  private pressesWhileCancelling = 0;
  /** Until when a Ctrl+C at the prompt is the late copy of the press that cancelled the last turn. */
  private echoUntil = 0;
  /** Until when a Ctrl+C at the prompt leaves (the second press, as in Node's REPL). */
  private leaveUntil = 0;

  constructor(
    private readonly io: ChatIO,
    private readonly leave: () => void,
    private readonly cancel: () => Promise<unknown>,
  ) {}

  press(): void {
    const now = Date.now();
    // The late copy of the press that cancelled the last turn: ignored, at the prompt or in the
    // next turn (a message typed at once may start it before the copy arrives).
    if (now < this.echoUntil) {
      this.echoUntil = 0;
      return;
    }
    if (this.turnRunning) {
      if (this.cancelling) {
        this.pressesWhileCancelling++;
        return this.io.note('(still cancelling the turn...)');
      }
      this.cancelling = true;
      this.pressesWhileCancelling = 1;
      this.io.note('(cancelling the turn...)');
      void this.cancel().catch((err: Error) => this.io.note(`could not cancel: ${err.message}`));
      return;
    }
    if (now < this.leaveUntil) return this.leave();
    this.leaveUntil = now + LEAVE_WINDOW_MS;
    this.io.note('(to leave, press Ctrl+C again, or Ctrl+D, or type /quit; the conversation stays open)');
  }

  turnStarted(): void {
    this.turnRunning = true;
    this.cancelling = false;
  }

  turnEnded(): void {
    this.turnRunning = false;
    // The press that cancelled this turn may still arrive a second time: it must not leave.
    if (this.cancelling && this.pressesWhileCancelling === 1) this.echoUntil = Date.now() + ECHO_WINDOW_MS;
    this.leaveUntil = 0;
  }
}

/** How long after a cancelled turn a Ctrl+C counts as the late copy of the press that cancelled it. */
const ECHO_WINDOW_MS = 2_000;
/** How long after the first Ctrl+C at the prompt a second one leaves. */
const LEAVE_WINDOW_MS = 3_000;

/**
 * Shows a running turn as it happens, from its events: the answer as it is written, tool calls
 * as they start and finish, retried model calls; asks for approvals inline. Returns the turn's
 * result and whether its answer was shown in full already.
 */
async function followTurn(
  client: Client,
  conversationId: string,
  message: string,
  after: number,
  result: Promise<ConversationTurnResult>,
  io: ChatIO,
  ask: (prompt: string) => Promise<string | undefined>,
  json: boolean,
): Promise<{ turn: ConversationTurnResult; answerShown: boolean }> {
  const finished = result.then((turn) => ({ turn }));
  finished.catch(() => undefined); // awaited below
  // With --json the answer is in the turn's object; only steps are shown (on stderr).
  const printer = new EventPrinter(
    { text: (text) => (json ? undefined : io.prompt(text)), note: io.note },
    { textPrefix: 'agent> ', modelCalls: true, approvals: false },
  );
  const stopWatching = watchProgress(client, conversationId, 'conversation', {
    retry: (r) => io.note(`  ! ${retryText(r)}`),
  });
  const stop = new AbortController();
  let ourTurn: number | undefined;
  const events = (async () => {
    try {
      for await (const e of streamLiveEvents(client, conversationId, {
        after,
        signal: stop.signal,
        until: (e) => ourTurn !== undefined && isTurnEnd(e, ourTurn),
      })) {
        if (e.type === 'turn_started' && ourTurn === undefined && e.message === message) ourTurn = e.turn;
        printer.show(e);
        if (e.type === 'approval_requested') await askApproval(client, conversationId, e, io, ask);
      }
    } catch (err) {
      io.note(`  (live view stopped: ${err instanceof Error ? err.message : String(err)})`);
    }
  })();
  try {
    const { turn } = await finished;
    // The last events arrive moments after the result.
    await Promise.race([events, new Promise((r) => setTimeout(r, 5_000).unref())]);
    printer.endLine();
    return { turn, answerShown: !json && printer.answerShown };
  } finally {
    stop.abort();
    stopWatching();
  }
}

/** Asks the person to approve or reject a pending tool call, and sends the decision. */
async function askApproval(
  client: Client,
  conversationId: string,
  p: { callId: string; summary: string; agent?: string; deadline?: string },
  io: ChatIO,
  ask: (prompt: string) => Promise<string | undefined>,
): Promise<void> {
  const who = p.agent ? ` (asked by agent ${p.agent})` : '';
  const by = p.deadline ? `, by ${p.deadline}` : '';
  const reply = (await ask(`  approve ${p.summary}${who}${by}? [y = approve, n or a reason = reject] `))?.trim() ?? '';
  const approve = /^y(es)?$/i.test(reply);
  const reason = !approve && reply && !/^no?$/i.test(reply) ? reply : undefined;
  await decideApproval(client, conversationId, { callId: p.callId, approve, ...(reason ? { reason } : {}) }).catch(
    (err: Error) => io.note(`  could not decide: ${err.message}`),
  );
}
