import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import type { Client } from '@temporalio/client';
import { toolCallSummary, type ConversationOptions, type ConversationTurnResult } from '../core';
import { cancelTurn, conversationStatus, decideApproval, endConversation, startMessage } from '../runtime/conversations';
import { turnJson, turnText } from './format-conversation';

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
 * An interactive chat on one conversation. While a turn runs it polls the status query and shows
 * what the agent does (model calls, tool calls with their arguments) and asks inline for approvals.
 * Ctrl+C during a turn cancels the turn; at the prompt it leaves (the conversation stays open).
 */
export async function chat(
  client: Client,
  conversationId: string,
  start: { taskQueue: string; options: ConversationOptions },
  io: ChatIO,
  json: boolean,
  uiLink: string | undefined,
): Promise<void> {
  const rl = createInterface({ input: io.input, terminal: false });
  const lines = rl[Symbol.asyncIterator]();
  const ask = async (prompt: string): Promise<string | undefined> => {
    io.prompt(prompt);
    const next = await lines.next();
    return next.done ? undefined : String(next.value);
  };
  let turnRunning = false;
  const onInterrupt = () => {
    if (turnRunning) {
      io.note('(cancelling the turn...)');
      void cancelTurn(client, conversationId).catch((err: Error) => io.note(`could not cancel: ${err.message}`));
    } else rl.close();
  };
  process.on('SIGINT', onInterrupt);
  io.note(`Conversation ${conversationId}${uiLink ? ` (${uiLink})` : ''}`);
  io.note('Type a message. /end closes the conversation; /quit (or Ctrl+D) leaves it open for later:');
  io.note(`  client.ts chat --conversation ${conversationId}`);
  try {
    for (;;) {
      const line = await ask('you> ');
      if (line === undefined || line.trim() === '/quit') break;
      if (line.trim() === '/end') {
        const closed = await endConversation(client, conversationId);
        io.note(`Conversation ended after ${closed.turns} turns.`);
        break;
      }
      if (!line.trim()) continue;
      turnRunning = true;
      try {
        const started = await startMessage(client, conversationId, { message: line }, start);
        const result = await followTurn(client, conversationId, started.result(), io, ask);
        io.out(json ? JSON.stringify(turnJson(result)) : `agent> ${turnText(result)}`);
      } catch (err) {
        io.note(`error: ${err instanceof Error ? err.message : String(err)}`);
      } finally {
        turnRunning = false;
      }
    }
  } finally {
    process.removeListener('SIGINT', onInterrupt);
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
    const status = await conversationStatus(client, conversationId).catch(() => undefined);
    const turn = status?.currentTurn;
    if (!status || !turn) continue;
    // While thinking, the call in flight is the next one.
    if (status.state === 'thinking' && !shown.has(`model:${turn.iteration + 1}`)) {
      shown.add(`model:${turn.iteration + 1}`);
      io.note(`  … model call ${turn.iteration + 1}`);
    }
    for (const c of turn.pendingToolCalls) {
      if (shown.has(c.id)) continue;
      shown.add(c.id);
      io.note(`  → ${toolCallSummary(c.name, c.arguments)}`);
    }
    for (const p of status.pendingApprovals) {
      if (shown.has(`approval:${p.callId}`)) continue;
      shown.add(`approval:${p.callId}`);
      const reply = (await ask(`  approve ${p.summary}? [y = approve, n or a reason = reject] `))?.trim() ?? '';
      const approve = /^y(es)?$/i.test(reply);
      const reason = !approve && reply && !/^no?$/i.test(reply) ? reply : undefined;
      await decideApproval(client, conversationId, { callId: p.callId, approve, ...(reason ? { reason } : {}) }).catch((err: Error) => io.note(`  could not decide: ${err.message}`));
      io.note(approve ? '  approved' : `  rejected${reason ? `: ${reason}` : ''}`);
    }
  }
  return finished;
}
