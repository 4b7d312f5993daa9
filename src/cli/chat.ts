import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import type { Client } from '@temporalio/client';
import { toolCallSummary, type ConversationOptions, type ConversationTurnResult, type TurnInput } from '../core';
import { decideApproval } from '../runtime/agent-workflows';
import { cancelTurn, endConversation, startMessage } from '../runtime/conversations';
import { turnJson, turnText } from './format-conversation';
import { onInterrupt } from './interrupt';
import { startOnlyWarning } from './option-flags';
import { readProgress, retryText } from './progress';
import { commandName } from './command-name';

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
 * during a turn cancels the turn and returns to the prompt; at the prompt it leaves (the
 * conversation stays open).
 */
export async function chat(options: {
  client: Client;
  conversationId: string;
  start: { taskQueue: string; options: ConversationOptions };
  io: ChatIO;
  json: boolean;
  uiLink: string | undefined;
  /** Runs a turn with its Temporal calls cancellable when the session closes (see Session.scoped). */
  scoped: <T>(work: () => Promise<T>) => Promise<T>;
}): Promise<void> {
  const { client, conversationId, start, io, json, uiLink } = options;
  const rl = createInterface({ input: io.input, terminal: false });
  const lines = rl[Symbol.asyncIterator]();
  const ask = async (prompt: string): Promise<string | undefined> => {
    io.prompt(prompt);
    const next = await lines.next();
    return next.done ? undefined : String(next.value);
  };
  let turnRunning = false;
  let cancelling = false;
  const offInterrupt = onInterrupt(() => {
    if (!turnRunning) return rl.close();
    if (cancelling) return io.note('(still cancelling the turn...)');
    cancelling = true;
    io.note('(cancelling the turn...)');
    void cancelTurn(client, conversationId).catch((err: Error) => io.note(`could not cancel: ${err.message}`));
  });
  io.note(`Conversation ${conversationId}${uiLink ? ` (${uiLink})` : ''}`);
  io.note('Type a message. /end closes the conversation; /quit (or Ctrl+D) leaves it open for later:');
  io.note(`  ${commandName()} chat --conversation ${conversationId}`);
  // Per-message options reach an open conversation too; the others only apply when it starts.
  const perTurn: Omit<TurnInput, 'message'> = {};
  if (start.options.tools) perTurn.tools = start.options.tools;
  if (start.options.approvalTools) perTurn.approvalTools = start.options.approvalTools;
  let warned = false;
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
      turnRunning = true;
      cancelling = false;
      try {
        const result = await options.scoped(async () => {
          const sent = await startMessage(client, conversationId, { message: line, ...perTurn }, start);
          if (sent.wasOpen && !warned) {
            warned = true;
            const warning = startOnlyWarning(conversationId, start.options);
            if (warning) io.note(warning);
          }
          return followTurn(client, conversationId, sent.result(), io, ask);
        });
        io.out(json ? JSON.stringify(turnJson(result)) : `agent> ${turnText(result)}`);
      } catch (err) {
        io.note(`error: ${err instanceof Error ? err.message : String(err)}`);
      } finally {
        turnRunning = false;
      }
    }
  } finally {
    offInterrupt();
    rl.close();
  }
}

/** Shows a running turn's progress and asks for approvals until its result arrives. */
async function followTurn(
  client: Client,
  conversationId: string,
  result: Promise<ConversationTurnResult>,
  io: ChatIO,
  ask: (prompt: string) => Promise<string | undefined>,
): Promise<ConversationTurnResult> {
  let done = false;
  const finished = result.finally(() => (done = true));
  finished.catch(() => undefined); // observed below; avoid an unhandled rejection while polling
  const shown = new Set<string>();
  while (!done) {
    await Promise.race([finished.catch(() => undefined), new Promise((r) => setTimeout(r, 250))]);
    if (done) break;
    const progress = await readProgress(client, conversationId, 'conversation').catch(() => undefined);
    if (!progress) continue;
    if (progress.modelCall !== undefined && !shown.has(`model:${progress.modelCall}`)) {
      shown.add(`model:${progress.modelCall}`);
      io.note(`  … model call ${progress.modelCall}`);
    }
    if (progress.retry && !shown.has(`retry:${progress.retry.call}:${progress.retry.attempt}`)) {
      shown.add(`retry:${progress.retry.call}:${progress.retry.attempt}`);
      io.note(`  ! ${retryText(progress.retry)}`);
    }
    for (const c of progress.pendingToolCalls) {
      if (shown.has(c.id)) continue;
      shown.add(c.id);
      io.note(`  → ${toolCallSummary(c.name, c.arguments)}`);
    }
    for (const p of progress.pendingApprovals) {
      if (shown.has(`approval:${p.callId}`)) continue;
      shown.add(`approval:${p.callId}`);
      const reply = (await ask(`  approve ${p.summary}? [y = approve, n or a reason = reject] `))?.trim() ?? '';
      const approve = /^y(es)?$/i.test(reply);
      const reason = !approve && reply && !/^no?$/i.test(reply) ? reply : undefined;
      await decideApproval(client, conversationId, { callId: p.callId, approve, ...(reason ? { reason } : {}) }).catch((err: Error) => io.note(`  could not decide: ${err.message}`));
      io.note(approve ? '  approved' : `  rejected${reason ? `: ${reason}` : ''}`);
    }
  }
  const turn = await finished;
  // Tool calls that started and finished between two polls were never seen running.
  for (const e of turn.toolExecutions) if (!shown.has(e.id)) io.note(`  → ${toolCallSummary(e.name, e.arguments)}`);
  return turn;
}
