import { imageLabel } from '../core/messages/images';
import { toolCallSummary } from '../core/context/summaries';
import type { ChatMessage, ImageRef } from '../core/messages/chat-message';
import type { ConversationTurnResult } from '../core/state/run-results';
import type { BudgetReport } from '../core/state/limits';
import type { AgentRunSummary } from '../client/list-runs';
import type { StatusReport } from '../client/workflow-controls';
import { approvalHint } from './progress';
import { hintCommand } from './command-name';
import { parseToolArguments } from '../core/messages/tool-arguments';
import { outcomeJson } from '../client/outcome-json';
import { usageText } from './usage-text';
import { tableText } from './table';

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
    if (m.role === 'system' && m.summary)
      lines.push(`(summary of messages ${m.summary.from}-${m.summary.to - 1}) ${m.content.replace(/^[^\n]*\n/, '')}`);
    else if (m.role === 'user') lines.push(`user: ${m.content}${imagesText(m.images)}`);
    else if (m.role === 'tool') lines.push(`  ← ${m.tool_call_id}: ${m.content}${imagesText(m.images)}`);
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

/** The status of a run or conversation as people read it. */
export function statusText(s: StatusReport, uiLink: string | undefined): string {
  const words = (text: string) => text.replace(/_/g, ' ');
  const plural = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;
  const lines: string[] = [];
  if (s.kind === 'run') {
    lines.push(`Run ${s.workflowId}: ${words(s.state)}`);
    lines.push(
      `  ${plural(s.iteration, 'LLM call')}${s.maxIterations ? ` of at most ${s.maxIterations}` : ''}, ${plural(s.toolExecutionCount, 'tool execution')}, ${usageText(s.usage)}`,
    );
    if (s.error) lines.push(`  error: ${s.error}${s.errorType ? ` (${s.errorType})` : ''}`);
  } else {
    lines.push(
      `Conversation ${s.conversationId}: ${words(s.state)}${s.closeReason ? ` (${words(s.closeReason)})` : ''}`,
    );
    lines.push(
      `  ${plural(s.turns, 'turn')}, ${plural(s.messageCount, 'message')}, ${usageText(s.usage)}${s.runs > 1 ? `, ${s.runs} workflow runs (continue-as-new)` : ''}`,
    );
    if (s.currentTurn)
      lines.push(
        `  turn ${s.currentTurn.turn}: model call ${s.currentTurn.iteration} of at most ${s.currentTurn.maxIterations}`,
      );
  }
  const versions = versionText(s);
  if (versions) lines.push(`  ${versions}`);
  if (s.budget) lines.push(`  budget: ${budgetText(s.budget)}`);
  if (s.memory)
    lines.push(
      `  memory: next request about ${s.memory.promptTokens.toLocaleString('en')} of ${s.memory.maxPromptTokens.toLocaleString('en')} tokens, ${s.memory.compactions} compaction${s.memory.compactions === 1 ? '' : 's'}`,
    );
  const running = s.kind === 'run' ? s.pendingToolCalls : (s.currentTurn?.pendingToolCalls ?? []);
  const waiting = new Set(s.pendingApprovals.map((p) => p.callId));
  for (const c of running)
    if (!waiting.has(c.id)) lines.push(`  running ${toolCallSummary(c.name, c.arguments)} [${c.id}]`);
  const id = s.kind === 'run' ? s.workflowId : s.conversationId;
  for (const p of s.pendingApprovals) lines.push(...approvalHint(id, p).map((line) => `  ${line}`));
  for (const w of s.waits ?? [])
    lines.push(
      w.kind === 'sleep'
        ? `  sleeping until ${w.until}${w.reason ? `: ${w.reason}` : ''} [call ${w.callId}]`
        : `  waiting for event "${w.name}" until ${w.until} at the latest [call ${w.callId}]; deliver it: ${hintCommand()} event ${id} ${w.name} '{...}'`,
    );
  if (s.kind === 'conversation') {
    if (s.queuedMessages) lines.push(`  ${plural(s.queuedMessages, 'message')} queued`);
    if (s.rejectedMessages.count)
      lines.push(`  ${s.rejectedMessages.count} queued message(s) dropped; last: ${s.rejectedMessages.lastError}`);
  }
  if (uiLink) lines.push(`  Temporal UI: ${uiLink}`);
  return lines.join('\n');
}

/** Which definition and build answer: `agent version av-…, build 2026-11-26.1`, or undefined when neither is known. */
export function versionText(s: { agentVersion?: string; buildId?: string }): string | undefined {
  const parts = [
    ...(s.agentVersion ? [`agent version ${s.agentVersion}`] : []),
    ...(s.buildId ? [`build ${s.buildId}`] : []),
  ];
  return parts.length ? parts.join(', ') : undefined;
}

/** `client.ts list`: one line per run or conversation, and the query that found them (for `temporal workflow list`). */
export function listText(runs: AgentRunSummary[], query: string): string {
  if (runs.length === 0) return `Nothing matches ${query}`;
  const rows = runs.map((r) => [
    r.workflowId,
    r.kind,
    // A terminated or timed-out workflow could not record how it ended: its attribute is stale.
    (['TERMINATED', 'TIMED_OUT'].includes(r.executionStatus) ? undefined : r.agentStatus) ??
      r.executionStatus.toLowerCase(),
    r.agent ?? '-',
    r.model ?? '-',
    r.iterations === undefined ? '-' : String(r.iterations),
    r.totalTokens === undefined ? '-' : String(r.totalTokens),
    r.startTime.replace('T', ' ').slice(0, 19),
  ]);
  const header = ['ID', 'KIND', 'STATUS', 'AGENT', 'MODEL', 'CALLS', 'TOKENS', 'STARTED (UTC)'];
  return [tableText(header, rows), '', `(query: ${query})`].join('\n');
}

/** A message's images as people read them: ` [image photo.png]`. */
function imagesText(images: readonly ImageRef[] | undefined): string {
  return images?.length ? ` ${images.map(imageLabel).join(' ')}` : '';
}

/** A budget as people read it: `2,400 of 3,000 tokens spent (600 left); $0.0120 of $0.0500`. */
export function budgetText(b: BudgetReport): string {
  const parts: string[] = [];
  if (b.limit.tokens !== undefined)
    parts.push(
      `${b.spent.tokens.toLocaleString('en')} of ${b.limit.tokens.toLocaleString('en')} tokens spent (${(b.left.tokens ?? 0).toLocaleString('en')} left)`,
    );
  if (b.limit.costUsd !== undefined)
    parts.push(
      `$${b.spent.costUsd.toFixed(4)} of $${b.limit.costUsd.toFixed(4)} spent ($${(b.left.costUsd ?? 0).toFixed(4)} left)`,
    );
  return parts.join('; ');
}
