import type { Delegation } from '../mcp-agent-tools';
import {
  CLIENT_CAPABILITIES_META_KEY,
  LOG_LEVEL_META_KEY,
  inputRequired,
  type CallToolResult,
  type InputRequiredResult,
  type RequestStateCodec,
  type ServerContext,
} from '@modelcontextprotocol/server';
import type { Client } from '@temporalio/client';
import { cancelWork, decideApproval, readStatus } from '../../client/workflow-controls';
import { isTurnEnd, streamEvents } from '../../client/event-stream';
import { streamLiveEvents } from '../../client/live-events';
import { runOutcome } from '../../client/run-agent';
import type { TurnResult } from '../../core/state/run-results';
import { approvalAsk, approvalForm, decisionOf, type ApprovalAsk } from '../approval-form';
import { levelOf, progressText, startWork, toolResult } from '../mcp-agent-tools';
import type { AgentMcpServerOptions } from '../mcp-server-options';

/**
 * An agent tool called on MCP's 2026-07-28 revision. The request carries no session, so a call
 * that needs a person (an approval, a tool's question) cannot ask the client mid-call, as
 * 2025-11-25's `elicitation/create` did: it answers `input_required`, with one elicitation form
 * per approval the run waits for, and a signed `requestState` naming the run. The client asks its
 * user and calls again with the answers (`inputResponses`) and the state; the answers decide the
 * approvals in the workflow, and the call goes on waiting for the run, from any replica, since
 * everything it knows is in Temporal and the state. Answers a client leaves out (or cancels)
 * leave those approvals waiting for the CLI, the HTTP API or another client, as before.
 */

/** What one round of a call hands the next (signed, through the client). */
export interface CallState {
  /** The run or conversation the call started. */
  w: string;
  /** The message's id, when the call is a conversation's turn. */
  m?: string;
  /** Approvals the client was asked and did not answer: not asked again in this call. */
  skip: string[];
}

/** How long, at most, a result waits for the progress reports of its turn to be sent (they end at the turn's end). */
const REPORT_DRAIN_MS = 10_000;

/** The input request key of an approval: one per call id, so a round can carry several. */
export const approvalKey = (callId: string): string => `approval:${callId}`;

/** Starts (or continues, in a later round) an agent call and answers with its result or its questions. */
export async function modernAgentCall(
  options: AgentMcpServerOptions & Delegation,
  agent: string,
  message: string,
  conversationId: string | undefined,
  ctx: ServerContext,
  codec: RequestStateCodec<CallState>,
): Promise<CallToolResult | InputRequiredResult> {
  let state = ctx.mcpReq.requestState<CallState>();
  if (state) {
    const skipped = await applyAnswers(options.client, state.w, ctx.mcpReq.inputResponses);
    state = { ...state, skip: [...state.skip, ...skipped] };
  } else {
    const started = await startWork(options, agent, message, conversationId);
    state = { w: started.workflowId, ...(started.messageId ? { m: started.messageId } : {}), skip: [] };
  }
  const outcome = outcomeOf(options.client, state);
  return awaitOutcome(options, agent, state, outcome, ctx, codec);
}

/**
 * Decides the approvals a round's answers answer (keys {@link approvalKey}); returns the call ids
 * the client did not decide (a cancelled form), which then wait for another way. An approval
 * decided elsewhere meanwhile stays as decided.
 */
export async function applyAnswers(
  client: Client,
  workflowId: string,
  responses: Record<string, unknown> | undefined,
): Promise<string[]> {
  const answers = Object.entries(responses ?? {}).filter(([key]) => key.startsWith('approval:'));
  if (answers.length === 0) return [];
  const pending = (await readStatus(client, workflowId)).pendingApprovals;
  const skipped: string[] = [];
  for (const [key, answer] of answers) {
    const callId = key.slice('approval:'.length);
    const approval = pending.find((p) => p.callId === callId);
    if (!approval) continue;
    const decision = decisionOf(approval, answer);
    if (!decision) skipped.push(callId);
    else await decideApproval(client, workflowId, { callId, ...decision }).catch(() => undefined);
  }
  return skipped;
}

/** The outcome of the work a call started: the run's, or the conversation turn's (its Update). */
function outcomeOf(client: Client, state: CallState): Promise<TurnResult> {
  const handle = client.workflow.getHandle(state.w);
  return state.m ? handle.getUpdateHandle<TurnResult>(state.m).result() : runOutcome(handle);
}

/**
 * Waits for the outcome, reporting progress (with a progress token) and logs (with a log level in
 * the envelope) on the way; answers `input_required` once the run waits for a person, when the
 * client can be asked (it declared elicitation). A cancelled request cancels the work.
 */
async function awaitOutcome(
  options: AgentMcpServerOptions,
  agent: string,
  state: CallState,
  outcome: Promise<TurnResult>,
  ctx: ServerContext,
  codec: RequestStateCodec<CallState>,
): Promise<CallToolResult | InputRequiredResult> {
  const { client } = options;
  const stop = new AbortController();
  const cancel = () => void cancelWork(client, state.w).catch(() => undefined);
  ctx.mcpReq.signal.addEventListener('abort', cancel);
  const asks = clientElicits(ctx)
    ? openApprovals(client, state, stop.signal)
    : new Promise<ApprovalAsk[]>(() => undefined);
  const reporting = report(client, agent, state, ctx, stop.signal);
  try {
    const first = await Promise.race([
      outcome.then((result) => ({ result })),
      asks.then((approvals) => ({ approvals })),
    ]);
    if ('result' in first) {
      // The progress of the turn reaches the client before its result (the event log may lag the outcome a little).
      await Promise.race([reporting, new Promise((r) => setTimeout(r, REPORT_DRAIN_MS))]);
      return toolResult(first.result, state.w, options.workflowUrl?.(state.w)) as CallToolResult;
    }
    return inputRequired({
      inputRequests: Object.fromEntries(
        first.approvals.map((ask) => [approvalKey(ask.callId), inputRequired.elicit(approvalForm(ask, state.w))]),
      ),
      requestState: await codec.mint(state, ctx),
    });
  } catch (err) {
    return { isError: true, content: [{ type: 'text', text: err instanceof Error ? err.message : String(err) }] };
  } finally {
    stop.abort();
    ctx.mcpReq.signal.removeEventListener('abort', cancel);
  }
}

/** The request's `_meta` envelope (revision 2026-07-28), as plain JSON. */
export function envelope(ctx: ServerContext): Record<string, unknown> {
  return (ctx.mcpReq.envelope ?? {}) as Record<string, unknown>;
}

/** Whether the request's client declared form elicitation (so it can be asked). */
export function clientElicits(ctx: ServerContext): boolean {
  const capabilities = envelope(ctx)[CLIENT_CAPABILITIES_META_KEY] as { elicitation?: unknown } | undefined;
  return !!capabilities?.elicitation;
}

/**
 * The approvals the work waits for that this call has not skipped, once there are any: those
 * already pending, else the next to be asked (the event log says when). Never settles when none
 * comes (the outcome wins the race).
 */
async function openApprovals(client: Client, state: CallState, signal: AbortSignal): Promise<ApprovalAsk[]> {
  const open = async () =>
    (await readStatus(client, state.w)).pendingApprovals.filter((p) => !state.skip.includes(p.callId)).map(approvalAsk);
  const now = await open().catch(() => []);
  if (now.length) return now;
  try {
    for await (const event of streamEvents(client, state.w, {
      ...(state.m ? { messageId: state.m } : {}),
      signal,
      until: (e) => isTurnEnd(e),
    })) {
      if (event.type !== 'approval_requested' || state.skip.includes(event.callId)) continue;
      const asks = await open();
      if (asks.length) return asks;
    }
  } catch {
    // The events cannot be read: the outcome (or its error) answers the call.
  }
  return new Promise<ApprovalAsk[]>(() => undefined);
}

/** Progress notifications (with a progress token) and log messages (with a log level) of the work. */
async function report(
  client: Client,
  agent: string,
  state: CallState,
  ctx: ServerContext,
  signal: AbortSignal,
): Promise<void> {
  const token = ctx.mcpReq._meta?.progressToken;
  const logs = envelope(ctx)[LOG_LEVEL_META_KEY] !== undefined;
  if (token === undefined && !logs) return;
  let step = 0;
  try {
    // Live: each event as the workflow records it, from any worker (`AGENT_LIVE_URL`), as the other doors show them.
    for await (const event of streamLiveEvents(client, state.w, {
      ...(state.m ? { messageId: state.m } : {}),
      signal,
      until: (e) => isTurnEnd(e),
      showsText: false,
    })) {
      const text = progressText(event);
      if (text === undefined) continue;
      // The SDK filters by the envelope's level.
      if (logs) await ctx.mcpReq.log(levelOf(event), { workflowId: state.w, event: event.type, message: text }, agent);
      if (token !== undefined)
        await ctx.mcpReq.notify({
          method: 'notifications/progress',
          params: { progressToken: token, progress: ++step, message: text },
        });
    }
  } catch {
    // Progress is a courtesy: the result still arrives without it.
  }
}
