import { WorkflowNotFoundError } from '@temporalio/common';
import {
  QueryNotRegisteredError,
  WorkflowUpdateFailedError,
  type Client,
  type WorkflowExecutionDescription,
} from '@temporalio/client';
import { BUSY_REFUSAL } from '../core/conversation/busy';
import type { ConversationResult } from '../core/conversation/conversation-status';
import { AGENT_WORKFLOW_TYPE, CONVERSATION_WORKFLOW_TYPE } from '../contracts/definitions';
import { ClientError } from './client-error';
import { isServerUnreachable } from './outages';
import { failingWorkflowTask, troubleClause, workflowTaskTrouble } from './workflow-task-failure';

/** What a workflow id refers to. */
export interface WorkflowLookup {
  workflowId: string;
  runId: string;
  /** `run`: a one-shot agent run; `conversation`; `other`: some workflow that is not ours. */
  kind: 'run' | 'conversation' | 'other';
  type: string;
  /** Temporal's status, e.g. `RUNNING`, `COMPLETED`, `FAILED`, `TERMINATED`. */
  status: string;
  running: boolean;
  /**
   * Its workers have failed its current workflow task more than once (bad keys, a missing stored
   * payload, code that no longer replays): it answers no query until a worker can run it.
   */
  failingTasks: boolean;
  /** The tenant it works for (`AgentTenant`), when it has one. */
  tenant?: string;
  /** How many events its history holds. */
  historyLength: number;
}

/**
 * Looks up the latest run of a workflow id, or undefined when there is none. Commands use it to
 * tell a one-shot run from a conversation before acting, so `send <run id>` is refused with a clear
 * message instead of a missing-handler error, and never starts a conversation under a run's id.
 */
export async function lookupWorkflow(client: Client, workflowId: string): Promise<WorkflowLookup | undefined> {
  try {
    const d = await client.workflow.getHandle(workflowId).describe();
    const kind =
      d.type === AGENT_WORKFLOW_TYPE ? 'run' : d.type === CONVERSATION_WORKFLOW_TYPE ? 'conversation' : 'other';
    const tenant = d.searchAttributes?.AgentTenant?.[0];
    return {
      workflowId,
      runId: d.runId,
      kind,
      type: d.type,
      status: d.status.name,
      running: d.status.name === 'RUNNING',
      failingTasks: (d.raw.pendingWorkflowTask?.attempt ?? 0) >= 2,
      historyLength: d.historyLength,
      ...(typeof tenant === 'string' ? { tenant } : {}),
    };
  } catch (err) {
    if (err instanceof WorkflowNotFoundError || (err as { code?: number }).code === 5 /* gRPC NOT_FOUND */)
      return undefined;
    throw err;
  }
}

/** `a one-shot run`, `a conversation`, or `a <type> workflow`, for messages. */
export function describeKind(found: WorkflowLookup): string {
  if (found.kind === 'run') return 'a one-shot run';
  if (found.kind === 'conversation') return 'a conversation';
  return `a ${found.type} workflow`;
}

/**
 * Turns a failed call about `workflowId` into a {@link ClientError} that says what happened, in
 * the words of what the caller asked for: the id does not exist, belongs to the other kind of
 * workflow, or has closed; the workflow refused the request; or Temporal is unreachable. Anything
 * else is returned as is.
 */
export async function explainFailure(
  client: Client,
  workflowId: string,
  err: unknown,
  wanted: 'conversation' | 'agent',
): Promise<unknown> {
  if (err instanceof ClientError) return err;
  // Its own time to find out: the call that failed may have spent the deadline of its context
  // (a query that no worker answered in time), which the calls made here would otherwise inherit.
  if (typeof client.withDeadline !== 'function') return explain(client, workflowId, err, wanted);
  return client.withDeadline(Date.now() + QUERY_WAIT_MS, () => explain(client, workflowId, err, wanted));
}

async function explain(
  client: Client,
  workflowId: string,
  err: unknown,
  wanted: 'conversation' | 'agent',
): Promise<unknown> {
  const message = err instanceof Error ? err.message : String(err);
  const cause =
    err instanceof WorkflowUpdateFailedError ? ((err.cause as Error | undefined)?.message ?? message) : message;
  const missing = err instanceof WorkflowNotFoundError || (err as { code?: number }).code === 5; /* gRPC NOT_FOUND */
  // An Update or query the workflow has no handler for: the id belongs to another kind of workflow.
  const noHandler = /no registered handler|did not register a handler/i.test(cause);
  if (!noHandler && err instanceof WorkflowUpdateFailedError)
    return new ClientError(cause.startsWith(BUSY_REFUSAL) ? 'busy' : 'rejected', cause, workflowId);
  // A query whose handler refused what it was asked (a fork from a branch that does not exist):
  // the server says INVALID_ARGUMENT, which the SDK names as if no handler were registered. (So it
  // names a worker's refusal of a keyless client's query, which is said further down.)
  if (!noHandler && err instanceof QueryNotRegisteredError && !isPlaintextRefused(err) && !isUndecodable(err))
    return new ClientError('invalid', message, workflowId);
  if (missing || noHandler) {
    const found = await lookupWorkflow(client, workflowId).catch(() => undefined);
    if (!found)
      return new ClientError(
        'not_found',
        `no ${wanted === 'conversation' ? 'conversation' : 'run or conversation'} "${workflowId}" exists`,
        workflowId,
      );
    const wrong = kindProblem(found, wanted);
    if (wrong) return wrong;
    if (!found.running)
      return new ClientError(
        'closed',
        `The ${found.kind === 'other' ? 'workflow' : found.kind} "${workflowId}" ${await closedText(client, found)}`,
        workflowId,
      );
    // Not found a moment ago, running now: it was just being started.
    if (missing)
      return new ClientError(
        'not_found',
        `${describeKind(found)} "${workflowId}" is only just starting; try again`,
        workflowId,
      );
  }
  // A query no worker could answer: if its workers fail its tasks, that is why (not an outage);
  // if Temporal answers but no worker does (none runs, or the one that had it died), that is.
  if (/failed to query workflow/i.test(message)) {
    const stuck = await cannotAnswer(client, workflowId);
    if (stuck) return stuck;
    const absent = await noWorkerAnswers(client, workflowId).catch(() => undefined);
    if (absent) return absent;
  }
  if (isServerUnreachable(err))
    return new ClientError('unreachable', `Temporal is unreachable: ${message}`, workflowId);
  if (isUndecodable(err) || isPlaintextRefused(err)) {
    const key = await encryptionKeyOf(client, workflowId).catch(() => undefined);
    return new ClientError(
      'undecodable',
      `"${workflowId}" is encrypted${key ? ` (key ${key})` : ''}, and this client has no keys: set AGENT_ENCRYPTION_KEYS to the workers' keys (id:base64key,...) where this client runs`,
      workflowId,
    );
  }
  // The server refuses requests to a workflow whose workers keep failing its tasks: say why they fail.
  if (/workflow task in failed state|update-with-start could not be executed/i.test(`${message} ${cause}`)) {
    const trouble = await workflowTaskTrouble(client, workflowId).catch(() => undefined);
    return new ClientError(
      'worker_failing',
      `"${workflowId}" cannot take this now: ${trouble ? troubleClause(trouble) : 'its workers fail its workflow tasks'}. It goes on once a worker can run it.`,
      workflowId,
    );
  }
  return err;
}

/**
 * The error for a query a workflow cannot answer because its workers fail its tasks, or
 * undefined when they do not: why they fail, what to fix, and what the server knows of it.
 */
export async function cannotAnswer(client: Client, workflowId: string): Promise<ClientError | undefined> {
  const why = await failingWorkflowTask(client, workflowId).catch(() => undefined);
  if (!why) return undefined;
  return new ClientError(
    'worker_failing',
    `"${workflowId}" cannot answer now: its workers fail its workflow tasks (${why}). Fix what the reason names (the encryption keys, the payload store, the worker's code); the workflow goes on once a worker can run it.`,
    workflowId,
    await lastKnownState(client, workflowId).catch(() => undefined),
  );
}

/** How long a read waits for a worker to answer its query before it says that none does. */
export const QUERY_WAIT_MS = 10_000;

/**
 * Runs `work` (reads by query) with its calls bounded by {@link QUERY_WAIT_MS}: a query that no
 * worker answers (none runs, or the one that had the workflow was killed) fails then, and
 * {@link explainFailure} says so, instead of the request hanging for the server's own limit.
 */
export function withinQueryWait<T>(client: Client, work: () => Promise<T>): Promise<T> {
  return typeof client.withDeadline === 'function' ? client.withDeadline(Date.now() + QUERY_WAIT_MS, work) : work();
}

/**
 * The error for a query no worker answered while Temporal itself answers (it describes the
 * workflow): which task queue has no worker, that the workflow is safe, what to do, and what the
 * server knows of it. Throws when Temporal cannot be reached either (then that is the error).
 */
async function noWorkerAnswers(client: Client, workflowId: string): Promise<ClientError> {
  // One description gives both the task queue and what is known: a second request could fail
  // where the first did not (a loaded server), and the 503 would lose its `lastKnown`.
  const d = await client.workflow.getHandle(workflowId).describe();
  return new ClientError(
    'no_worker',
    `no worker answered for "${workflowId}" (task queue "${d.taskQueue}"): none runs, or the one that ran it stopped. It is kept in Temporal and goes on once a worker for task queue "${d.taskQueue}" runs; start one, then ask again.`,
    workflowId,
    knownFrom(d),
  );
}

/** Whether a payload could not be decoded because it is encrypted and this client has no codec for it. */
export function isUndecodable(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++)
    if (/Unknown encoding: binary\/encrypted/.test(e.message)) return true;
  return false;
}

/**
 * Whether a worker that requires encryption refused this client's request (a query's argument)
 * because it is not encrypted: the client has no keys, as with {@link isUndecodable}.
 */
export function isPlaintextRefused(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++)
    if (/a payload is not encrypted, and this worker requires encryption/.test(e.message)) return true;
  return false;
}

/** The id of the key a workflow's input is encrypted with (its first event), if it is. */
async function encryptionKeyOf(client: Client, workflowId: string): Promise<string | undefined> {
  const { history } = await client.workflowService.getWorkflowExecutionHistory({
    namespace: client.options.namespace,
    execution: { workflowId },
    maximumPageSize: 1,
  });
  const metadata = history?.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0]?.metadata;
  const id = metadata?.['encryption-key-id'];
  return id ? Buffer.from(id).toString() : undefined;
}

/**
 * What the server knows of a workflow without asking its workers: its Temporal status, when it
 * started, and the agent search attributes it last upserted (what it was doing, calls, tokens).
 */
export async function lastKnownState(client: Client, workflowId: string): Promise<Record<string, unknown>> {
  return knownFrom(await client.workflow.getHandle(workflowId).describe());
}

/** {@link lastKnownState} from a description already made. */
function knownFrom(d: WorkflowExecutionDescription): Record<string, unknown> {
  const known: Record<string, unknown> = { status: d.status.name, startTime: d.startTime.toISOString() };
  for (const [name, values] of Object.entries(d.searchAttributes ?? {}))
    if (name.startsWith('Agent') && Array.isArray(values) && values.length) known[name] = values[0];
  return known;
}

/** A `wrong_kind` error when `found` is not what the caller wanted, else undefined. */
export function kindProblem(found: WorkflowLookup, wanted: 'conversation' | 'agent'): ClientError | undefined {
  if (found.kind === 'conversation' || (found.kind === 'run' && wanted === 'agent')) return undefined;
  return new ClientError(
    'wrong_kind',
    `"${found.workflowId}" is ${describeKind(found)}, not ${wanted === 'conversation' ? 'a conversation' : 'an agent run or conversation'}`,
    found.workflowId,
  );
}

/** `is closed (ended after 2 turns)`, `has finished (completed)`: how a closed workflow ended. */
export async function closedText(client: Client, found: WorkflowLookup): Promise<string> {
  const status = found.status.toLowerCase().replace(/_/g, ' ');
  if (found.kind === 'conversation' && found.status === 'COMPLETED') {
    const result = (await client.workflow
      .getHandle(found.workflowId)
      .result()
      .catch(() => undefined)) as ConversationResult | undefined;
    if (result)
      return `is closed (${result.reason === 'idle_timeout' ? 'idle timeout' : 'ended'} after ${result.turns} turn${result.turns === 1 ? '' : 's'})`;
  }
  return found.kind === 'conversation' ? `is closed (${status})` : `has finished (${status})`;
}
