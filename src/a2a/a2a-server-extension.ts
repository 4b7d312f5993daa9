import { randomUUID } from 'node:crypto';
import { Artifact, Message, Part, Role, TaskState } from '@a2a-js/sdk';
import { AgentEvent as A2AEvent, type ExecutionEventBus, type RequestContext } from '@a2a-js/sdk/server';
import { status, textPart } from './task-events';

/**
 * What an application does with A2A messages beside its agents: a say in each message before an
 * agent sees it. An extension answers some messages itself (a reply as a Message, or a task it
 * settles, with artifacts of any kind: text, files, data) and lets the agent take the others, as
 * they are or with the text it gives. `a2aHandler`'s `extend`, the HTTP API's `a2a.extend`, and
 * the export `a2aServer` of a module that `durable-agents a2a --module <file>` serves.
 *
 * Messages and parts are A2A 1.0's JSON (`{"text": ...}`, `{"raw": "<base64>", "filename",
 * "mediaType"}`, `{"url": ...}`, `{"data": {...}}`), as clients send them: no SDK types to learn.
 */
export interface A2AServerExtension {
  /**
   * Called for every message a client sends to one of the agents, a new task's or a follow-up's
   * (`message.taskId` set), before the agent sees it. Return nothing to let the agent take it as
   * it is. A follow-up of a task may only be given to the agent (`{ kind: "agent" }`): the task is
   * a turn of the agent's conversation, which waits for the answer or goes on with it.
   */
  onMessage(
    message: A2AMessageJson,
    context: A2AMessageContext,
  ): A2AMessageOutcome | undefined | Promise<A2AMessageOutcome | undefined>;
}

/** A message or artifact part in A2A 1.0's JSON: exactly one of `text`, `raw` (base64), `url` or `data`. */
export interface A2APartInput {
  text?: string;
  /** A file's bytes, base64. */
  raw?: string;
  /** A file's URL. */
  url?: string;
  data?: unknown;
  filename?: string;
  mediaType?: string;
  metadata?: Record<string, unknown>;
}

/** A message as a client sent it, in A2A 1.0's JSON. */
export interface A2AMessageJson {
  messageId: string;
  contextId?: string;
  taskId?: string;
  role: string;
  parts: A2APartInput[];
  metadata?: Record<string, unknown>;
  extensions?: string[];
  referenceTaskIds?: string[];
}

/** Where a message arrived. */
export interface A2AMessageContext {
  /** The agent the message was sent to. */
  agent: string;
  /** The caller's tenant, when the server has tenants. */
  tenant?: string;
  /** The task the message is for (a new task's id when it starts one). */
  taskId: string;
  contextId: string;
  /** Whether the message follows up a task (one that waits for input, or still works). */
  followUp: boolean;
}

/** An artifact a settled task carries. */
export interface A2AArtifactInput {
  /** Default: a new UUID. */
  artifactId?: string;
  name?: string;
  description?: string;
  parts: A2APartInput[];
  metadata?: Record<string, unknown>;
}

/**
 * What happens to a message instead of the agent taking it as sent: `agent` gives the agent this
 * text in place of the message's text and data parts (its images stay); `message` answers with
 * a Message and starts no task (A2A's reply for what needs no task); `task` settles a new task
 * without the agent: its artifacts, a status message, and its state (default `completed`).
 */
export type A2AMessageOutcome =
  | { kind: 'agent'; text: string }
  | { kind: 'message'; parts: A2APartInput[]; metadata?: Record<string, unknown> }
  | {
      kind: 'task';
      state?: 'completed' | 'failed' | 'rejected';
      artifacts?: A2AArtifactInput[];
      /** The status message's text. */
      message?: string;
    };

const STATES = {
  completed: TaskState.TASK_STATE_COMPLETED,
  failed: TaskState.TASK_STATE_FAILED,
  rejected: TaskState.TASK_STATE_REJECTED,
} as const;

/**
 * Asks the extension about the request's message: the outcome, checked (a malformed one throws,
 * naming the fix), or undefined when the agent takes the message as it is.
 */
export async function extensionOutcome(
  extension: A2AServerExtension | undefined,
  ctx: RequestContext,
  context: A2AMessageContext,
): Promise<A2AMessageOutcome | undefined> {
  if (!extension) return undefined;
  const outcome = await extension.onMessage(Message.toJSON(ctx.userMessage) as A2AMessageJson, context);
  if (outcome === undefined || outcome === null) return undefined;
  const problem = outcomeProblem(outcome, context.followUp);
  if (problem) throw new Error(`the A2A server extension's onMessage ${problem}`);
  return outcome;
}

/** What is wrong with an outcome, in words that name the fix; undefined when it is well formed. */
export function outcomeProblem(outcome: unknown, followUp: boolean): string | undefined {
  if (typeof outcome !== 'object' || outcome === null) return 'must return an outcome object or nothing';
  const o = outcome as Record<string, unknown>;
  if (o.kind === 'agent') return typeof o.text === 'string' ? undefined : 'returned { kind: "agent" } without its text';
  if (followUp)
    return `returned { kind: "${String(o.kind)}" } for a follow-up of a task: a task is a turn of the agent's conversation, so only { kind: "agent", text } (or nothing) goes on with it`;
  if (o.kind === 'message')
    return o.metadata !== undefined && !isObject(o.metadata)
      ? 'returned a message whose metadata is not an object'
      : partsProblem(o.parts, 'the message');
  if (o.kind === 'task') {
    if (o.state !== undefined && !(typeof o.state === 'string' && o.state in STATES))
      return `returned the task state ${JSON.stringify(o.state)}: use "completed", "failed" or "rejected"`;
    if (o.message !== undefined && typeof o.message !== 'string') return 'returned a task whose message is not text';
    if (o.artifacts === undefined) return undefined;
    if (!Array.isArray(o.artifacts)) return 'returned task artifacts that are not a list';
    for (const [i, a] of o.artifacts.entries()) {
      const problem = partsProblem((a as { parts?: unknown } | null)?.parts, `artifact ${i}`);
      if (problem) return problem;
    }
    return undefined;
  }
  return `returned the kind ${JSON.stringify(o.kind)}: use "agent", "message" or "task"`;
}

function partsProblem(parts: unknown, what: string): string | undefined {
  if (!Array.isArray(parts) || parts.length === 0) return `returned ${what} without parts`;
  for (const [i, part] of parts.entries()) {
    const p = (part ?? {}) as Record<string, unknown>;
    const kinds = ['text', 'raw', 'url', 'data'].filter((k) => p[k] !== undefined);
    if (kinds.length !== 1)
      return `returned part ${i} of ${what} with ${kinds.length ? kinds.join(' and ') : 'no content'}: give exactly one of text, raw (base64), url or data`;
    if (p.text !== undefined && typeof p.text !== 'string')
      return `returned part ${i} of ${what} whose text is not a string`;
    if (p.data === null) return `returned part ${i} of ${what} whose data is null: give a JSON object or value`;
    if (p.metadata !== undefined && !isObject(p.metadata))
      return `returned part ${i} of ${what} whose metadata is not an object`;
    if (p.raw !== undefined && !(typeof p.raw === 'string' && /^[A-Za-z0-9+/]*={0,2}$/.test(p.raw)))
      return `returned part ${i} of ${what} whose raw bytes are not base64`;
    if (p.url !== undefined && typeof p.url !== 'string')
      return `returned part ${i} of ${what} whose url is not a string`;
  }
  return undefined;
}

function isObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The message as the agent sees it under an `agent` outcome: the given text, and the message's files. */
export function messageForAgent(message: Message, text: string): Message {
  const files = message.parts.filter((p) => p.content?.$case === 'raw' || p.content?.$case === 'url');
  return { ...message, parts: [textPart(text), ...files] };
}

/**
 * Carries out a `message` or `task` outcome on the request's bus: a Message reply, or a new task
 * (submitted, its artifacts, its final state) that the task store keeps as any other.
 */
export function answerWithoutAgent(
  ctx: RequestContext,
  bus: ExecutionEventBus,
  outcome: Exclude<A2AMessageOutcome, { kind: 'agent' }>,
): void {
  const ids = { taskId: ctx.taskId, contextId: ctx.contextId };
  const reply = (parts: A2APartInput[], taskId: string) => ({
    messageId: randomUUID(),
    contextId: ctx.contextId,
    taskId,
    role: Role.ROLE_AGENT,
    parts: parts.map((p) => Part.fromJSON(p)),
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  });
  if (outcome.kind === 'message') {
    bus.publish(A2AEvent.message({ ...reply(outcome.parts, ''), metadata: outcome.metadata }));
    return;
  }
  bus.publish(
    A2AEvent.task({
      id: ctx.taskId,
      contextId: ctx.contextId,
      status: status(TaskState.TASK_STATE_SUBMITTED),
      artifacts: [],
      history: [ctx.userMessage],
      metadata: undefined,
    }),
  );
  for (const a of outcome.artifacts ?? [])
    bus.publish(
      A2AEvent.artifactUpdate({
        ...ids,
        artifact: Artifact.fromJSON({ ...a, artifactId: a.artifactId ?? randomUUID() }),
        append: false,
        lastChunk: true,
        metadata: undefined,
      }),
    );
  const text = outcome.message;
  bus.publish(
    A2AEvent.statusUpdate({
      ...ids,
      status: status(STATES[outcome.state ?? 'completed'], text ? reply([{ text }], ctx.taskId) : undefined),
      metadata: undefined,
    }),
  );
}
