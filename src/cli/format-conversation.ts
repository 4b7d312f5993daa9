import { toolCallSummary, type ChatMessage, type ConversationStatus, type ConversationTurnResult } from '../core';
import { parseToolArguments } from '../core/tool-arguments';
import { outcomeJson } from './format-outcome';

/** A turn's `--json` object: the run contract plus the conversation and turn number. */
export function turnJson(result: ConversationTurnResult): Record<string, unknown> {
  return { conversationId: result.workflowId, turn: result.turn, ...outcomeJson(result) };
}

/** A turn's answer in a chat: the text, or what stopped the turn. */
export function turnText(result: ConversationTurnResult): string {
  switch (result.status) {
    case 'failed':
      return `(the turn failed: ${result.error ?? 'unknown error'})`;
    case 'cancelled':
      return '(turn cancelled)';
    case 'immediate':
      return `(done: ${result.toolExecutions.map((e) => `${toolCallSummary(e.name, e.arguments)} → ${e.result}`).join('; ')})`;
    case 'completed':
      return result.content ?? '';
    default:
      return `${result.content ?? ''} (${result.status.replace('_', ' ')})`;
  }
}

/** The transcript as people read it: one line per message, tool calls and results by id. */
export function transcriptText(transcript: { system?: string; messages: ChatMessage[] }): string {
  const lines: string[] = [];
  if (transcript.system) lines.push(`system: ${transcript.system}`);
  for (const m of transcript.messages) {
    if (m.role === 'user') lines.push(`user: ${m.content}`);
    else if (m.role === 'tool') lines.push(`  ← ${m.tool_call_id}: ${m.content}`);
    else if (m.role === 'assistant') {
      if (m.content) lines.push(`assistant: ${m.content}`);
      for (const c of m.tool_calls ?? []) {
        const args = parseToolArguments(c.function.arguments);
        lines.push(`  → ${c.id}: ${toolCallSummary(c.function.name, args.ok ? args.value : {})}`);
      }
    }
  }
  return lines.length ? lines.join('\n') : '(no messages yet)';
}

/** The status as people read it. */
export function statusText(s: ConversationStatus, uiLink: string | undefined): string {
  const lines = [`Conversation ${s.conversationId}: ${s.state.replace('_', ' ')}${s.closeReason ? ` (${s.closeReason.replace('_', ' ')})` : ''}`];
  lines.push(`  ${s.turns} turn${s.turns === 1 ? '' : 's'}, ${s.messageCount} messages, ${s.usage.totalTokens} tokens${s.runs > 1 ? `, ${s.runs} workflow runs (continue-as-new)` : ''}`);
  if (s.currentTurn) lines.push(`  turn ${s.currentTurn.turn}: model call ${s.currentTurn.iteration} of at most ${s.currentTurn.maxIterations}`);
  for (const c of s.currentTurn?.pendingToolCalls ?? []) lines.push(`  running ${toolCallSummary(c.name, c.arguments)} [${c.id}]`);
  for (const p of s.pendingApprovals) lines.push(`  awaiting approval: ${p.summary}  → client.ts approve|reject ${s.conversationId} ${p.callId}`);
  if (s.queuedMessages) lines.push(`  ${s.queuedMessages} message${s.queuedMessages === 1 ? '' : 's'} queued`);
  if (s.rejectedMessages.count) lines.push(`  ${s.rejectedMessages.count} queued message(s) dropped; last: ${s.rejectedMessages.lastError}`);
  if (uiLink) lines.push(`  Temporal UI: ${uiLink}`);
  return lines.join('\n');
}
