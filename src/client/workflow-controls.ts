import type { Client } from '@temporalio/client';
import {
  closedConversationStatus,
  type ConversationResult,
  type ConversationStatus,
} from '../core/conversation/conversation-status';
import type { ActiveWait, PendingApproval } from '../core/state/run-state';
import type { AgentState, MemoryReport } from '../core/state/run-results';
import type { ApprovalDecision } from '../core/tool-calls/approvals';
import type { ChatMessage, Usage } from '../core/messages/chat-message';
import type { BudgetReport } from '../core/state/limits';
import type { agentWorkflow } from '../workflows/bundle';
import {
  branchesQuery,
  decideApprovalUpdate,
  pendingApprovalsQuery,
  statusQuery,
  transcriptQuery,
} from '../contracts/definitions';
import { ClientError } from './client-error';
import { conversationStatus, cancelTurn } from './conversations';
import { runOutcome } from './run-agent';
import {
  cannotAnswer,
  closedText,
  explainFailure,
  kindProblem,
  lookupWorkflow,
  withinQueryWait,
  type WorkflowLookup,
} from './workflow-lookup';

/**
 * Client calls that work on any agent workflow id, a one-shot run or a conversation: status,
 * transcript, approvals and cancel. Commands take whatever id a person has at hand.
 */

/** A one-shot run's status: what it is doing, or how it ended. */
export interface RunStatusReport {
  kind: 'run';
  workflowId: string;
  state: AgentState;
  /** LLM calls made so far. */
  iteration: number;
  /** Known while the run is open. */
  maxIterations?: number;
  pendingToolCalls: Array<{ id: string; name: string; arguments: Record<string, unknown> }>;
  pendingApprovals: PendingApproval[];
  toolExecutionCount: number;
  usage: Usage;
  /** Known while the run is open. */
  messageCount?: number;
  /** The agent the run is on, when it was handed off. */
  agent?: string;
  error?: string;
  errorType?: string;
  /** With a budget: its limits, what was spent and what is left. */
  budget?: BudgetReport;
  /** With memory by tokens (while the run is open): the bound, the next request's size, the compactions. */
  memory?: MemoryReport;
  /** The durable waits under way (`sleep`, `wait_for_event`): what for, and until when. */
  waits?: ActiveWait[];
  /** A named agent's version (see `agentVersion`). */
  agentVersion?: string;
  /** With Worker Versioning: the build the run ran on. */
  buildId?: string;
  /** The tenant it works for (`AgentTenant`). */
  tenant?: string;
}

/** A run's or a conversation's status (`kind` tells which). */
export type StatusReport = RunStatusReport | ({ kind: 'conversation'; tenant?: string } & ConversationStatus);

/** The status of a run or conversation. Closed ones are read from their result, so no worker has to replay them. */
export async function readStatus(client: Client, workflowId: string): Promise<StatusReport> {
  try {
    return await withinQueryWait(client, () => statusOf(client, workflowId));
  } catch (err) {
    throw await explainFailure(client, workflowId, err, 'agent');
  }
}

async function statusOf(client: Client, workflowId: string): Promise<StatusReport> {
  const found = await findAnswering(client, workflowId);
  const report = await statusOfFound(client, workflowId, found);
  return found.tenant !== undefined ? { ...report, tenant: found.tenant } : report;
}

async function statusOfFound(client: Client, workflowId: string, found: WorkflowLookup): Promise<StatusReport> {
  if (found.kind === 'conversation') {
    if (found.running) return { kind: 'conversation', ...(await conversationStatus(client, workflowId)) };
    return { kind: 'conversation', ...(await closedStatus(client, found)) };
  }
  const handle = client.workflow.getHandle<typeof agentWorkflow>(workflowId);
  if (found.running) {
    const s = await handle.query(statusQuery);
    const open: RunStatusReport = {
      kind: 'run',
      workflowId,
      state: s.state,
      iteration: s.iteration,
      maxIterations: s.maxIterations,
      pendingToolCalls: s.pendingToolCalls,
      pendingApprovals: s.pendingApprovals,
      toolExecutionCount: s.toolExecutionCount,
      usage: s.usage,
      messageCount: s.messageCount,
    };
    if (s.agent) open.agent = s.agent;
    if (s.budget) open.budget = s.budget;
    if (s.memory) open.memory = s.memory;
    if (s.waits) open.waits = s.waits;
    if (s.agentVersion) open.agentVersion = s.agentVersion;
    if (s.buildId) open.buildId = s.buildId;
    return open;
  }
  const outcome = await runOutcome(handle);
  const report: RunStatusReport = {
    kind: 'run',
    workflowId,
    state: outcome.status,
    iteration: outcome.iterations,
    pendingToolCalls: [],
    pendingApprovals: [],
    toolExecutionCount: outcome.toolExecutions.length,
    usage: outcome.usage,
  };
  if (outcome.agent !== undefined) report.agent = outcome.agent;
  if (outcome.error !== undefined) report.error = outcome.error;
  if (outcome.errorType !== undefined) report.errorType = outcome.errorType;
  if (outcome.budget) report.budget = outcome.budget;
  if (outcome.agentVersion) report.agentVersion = outcome.agentVersion;
  if (outcome.buildId) report.buildId = outcome.buildId;
  return report;
}

/**
 * The whole transcript of a run or conversation, oldest first; for conversations across their
 * continue-as-new runs. Closed workflows answer by replay on a worker.
 */
export async function readTranscript(
  client: Client,
  workflowId: string,
  options: { branch?: string } = {},
): Promise<{ system?: string; messages: ChatMessage[] }> {
  // Whether it exists, is ours, and its workers can answer (why not, at once, when they fail its tasks).
  await findAnswering(client, workflowId);
  try {
    if (options.branch !== undefined) {
      const branches = await withinQueryWait(client, () => client.workflow.getHandle(workflowId).query(branchesQuery));
      if (!branches.some((b) => b.id === options.branch))
        throw new ClientError(
          'not_found',
          `"${workflowId}" has no branch "${options.branch}"; its branches: ${branches.map((b) => b.id).join(', ')}`,
          workflowId,
        );
    }
    return await withinQueryWait(client, () => transcriptOf(client, workflowId, options.branch));
  } catch (err) {
    if (err instanceof ClientError) throw err;
    throw await explainFailure(client, workflowId, err, 'agent');
  }
}

async function transcriptOf(
  client: Client,
  workflowId: string,
  branch: string | undefined,
): Promise<{ system?: string; messages: ChatMessage[] }> {
  // Runs and conversations answer the transcript query across their continue-as-new runs.
  const read = await readRange(client, workflowId, undefined, 0, undefined, branch);
  const messages = read.messages.map(withoutCounts);
  return read.system === undefined ? { messages } : { system: read.system, messages };
}

/** A message as clients read it: without the token count the workers keep on it for memory by tokens. */
function withoutCounts(message: ChatMessage): ChatMessage {
  if (message.tokens === undefined) return message;
  const { tokens: _tokens, ...rest } = message;
  return rest;
}

/**
 * Approves or rejects a tool call awaiting approval, in a run or a conversation. A call that an
 * agent it called as a tool waits on (at any depth) is listed by the caller with that run's
 * workflow id: the decision goes there, so a person decides everything through the top run's id.
 */
export async function decideApproval(
  client: Client,
  workflowId: string,
  decision: ApprovalDecision,
): Promise<{ callId: string; approved: boolean; stillPending: number; workflowId?: string }> {
  let target = workflowId;
  try {
    const pending = await client.workflow.getHandle(workflowId).query(pendingApprovalsQuery);
    const owner = pending.find((p) => p.callId === decision.callId && p.workflowId && p.workflowId !== workflowId);
    if (owner?.workflowId) target = owner.workflowId;
  } catch {
    // The update below reports what is wrong (a closed run, an unknown id, no worker), in its words.
  }
  try {
    const result = await client.workflow.getHandle(target).executeUpdate(decideApprovalUpdate, { args: [decision] });
    return target === workflowId ? result : { ...result, workflowId: target };
  } catch (err) {
    throw await explainFailure(client, target, err, 'agent');
  }
}

/**
 * Cancels what is running: a conversation's current turn (the conversation stays open), or a
 * whole one-shot run (it ends with status `cancelled`).
 */
export async function cancelWork(
  client: Client,
  workflowId: string,
): Promise<{ kind: 'run' } | { kind: 'conversation'; turn: number }> {
  const found = await findRunOrConversation(client, workflowId);
  if (found.kind === 'conversation') return { kind: 'conversation', ...(await cancelTurn(client, workflowId)) };
  if (!found.running)
    throw new ClientError(
      'closed',
      `The run "${workflowId}" ${await closedText(client, found)}; there is nothing to cancel`,
      workflowId,
    );
  await client.workflow.getHandle(workflowId).cancel();
  return { kind: 'run' };
}

/**
 * The workflow behind an id, which must be a run or a conversation: `not_found`, `wrong_kind`, or
 * the reason Temporal could not be asked, each as a `ClientError` that says so.
 */
export async function findRunOrConversation(
  client: Client,
  workflowId: string,
): Promise<WorkflowLookup & { kind: 'run' | 'conversation' }> {
  let found: WorkflowLookup | undefined;
  try {
    found = await lookupWorkflow(client, workflowId);
  } catch (err) {
    throw await explainFailure(client, workflowId, err, 'agent');
  }
  if (!found) throw new ClientError('not_found', `no run or conversation "${workflowId}" exists`, workflowId);
  const wrong = kindProblem(found, 'agent');
  if (wrong) throw wrong;
  return found as WorkflowLookup & { kind: 'run' | 'conversation' };
}

/**
 * {@link findRunOrConversation}, for a query: a running workflow whose workers fail its tasks would leave the query
 * waiting for them in vain (about 30 s), so why they fail is said at once instead.
 */
async function findAnswering(client: Client, workflowId: string): ReturnType<typeof findRunOrConversation> {
  const found = await findRunOrConversation(client, workflowId);
  if (found.running && found.failingTasks) {
    const stuck = await cannotAnswer(client, workflowId);
    if (stuck) throw stuck;
  }
  return found;
}

async function closedStatus(client: Client, found: WorkflowLookup): Promise<ConversationStatus> {
  if (found.status === 'COMPLETED') {
    return closedConversationStatus((await client.workflow.getHandle(found.workflowId).result()) as ConversationResult);
  }
  // Closed by Temporal (terminated, cancelled, failed, timed out): no result to read counters from.
  return {
    ...closedConversationStatus({
      conversationId: found.workflowId,
      reason: 'ended',
      turns: 0,
      messageCount: 0,
      usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
      runs: 1,
    }),
    closeReason: found.status.toLowerCase() as ConversationStatus['closeReason'],
  };
}

/**
 * Reads transcript indices `[from, to)` from a conversation run, reaching into earlier runs
 * (continue-as-new) for what this one no longer holds. Closed runs answer queries by replay on a worker.
 */
async function readRange(
  client: Client,
  conversationId: string,
  runId: string | undefined,
  from: number,
  to: number | undefined,
  branch?: string,
): Promise<{ system?: string; messages: ChatMessage[] }> {
  const h = client.workflow.getHandle(conversationId, runId);
  const range = { offset: from, ...(branch !== undefined ? { branch } : {}) };
  const first = await h.query(transcriptQuery, { ...range, limit: to === undefined ? undefined : to - from });
  // A branch an earlier run keeps (the conversation continued as new since): read it there.
  if (first.heldBy) return readRange(client, conversationId, first.heldBy, from, to, branch);
  const end = to ?? first.total;
  // Before what this run holds, every branch is the same: the previous run's transcript (a fork's, its source's).
  const older =
    from < first.heldFrom && first.previousRunId
      ? (await readRange(client, first.previousWorkflowId ?? conversationId, first.previousRunId, from, first.heldFrom))
          .messages
      : [];
  const messages = [...first.messages];
  for (let next = first.offset + messages.length; next < end; next = first.offset + messages.length) {
    const page = await h.query(transcriptQuery, { ...range, offset: next, limit: end - next });
    if (page.messages.length === 0) break;
    messages.push(...page.messages);
  }
  return { system: first.system, messages: [...older, ...messages] };
}
