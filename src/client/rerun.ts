import { randomBytes } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { AgentInput, RerunSeed } from '../core/state/run-options';
import type { ChatMessage } from '../core/messages/chat-message';
import type { BlobStore } from '../storage/blob-store';
import { readTranscript } from './workflow-controls';
import { ClientError } from './client-error';
import { runOutcome, startAgentRun, type AgentRunHandle, type RunOutcome } from './run-agent';
import { recordedRunInput } from './tool-results';
import { requireWorkerFor } from './task-queue-workers';
import { lookupWorkflow } from './workflow-lookup';
import { adoptStartingState } from './workspaces';
import { workspaceAt } from '../core/workspace/workspace-options';

/**
 * Re-running a recorded run with a change (another model, another system message): the new run
 * starts from the recorded messages before model call `fromStep`, and a tool call identical to a
 * recorded one gets the recorded output instead of running again (no side effects), unless
 * `liveTools`. Where the new run's steps first differ from the recorded ones is its divergence.
 */

/** Options of {@link startRerun}. */
export interface RerunOptions {
  taskQueue: string;
  /** The model call (1-based) to start at: the recorded messages before it are kept. Default 1. */
  fromStep?: number;
  /** Another model (a named model or a provider-prefixed name). */
  model?: string;
  /** Another system message. */
  system?: string;
  /** Run every tool call for real instead of answering identical ones from the recording. */
  liveTools?: boolean;
  /** The new run's id (default `<recorded id>-rerun-<random>`). */
  workflowId?: string;
  /**
   * Where the workers keep workspace states (default: this client's blob store, `AGENT_BLOB_DIR`
   * or `AGENT_PAYLOAD_STORE`): the run's state at `fromStep` is copied into the re-run's own.
   */
  blobStore?: BlobStore;
}

/** What a re-run started from: the recorded run and its outcome. */
export interface Rerun {
  handle: AgentRunHandle;
  of: string;
  fromStep: number;
  recorded: { messages: ChatMessage[]; outcome: RunOutcome };
}

/** Where a re-run's steps first differ from the recorded run's, or `null` when they do not. */
export type Divergence = {
  /** The model call (1-based, as in the recorded run) where they differ. */
  step: number;
  recorded: string;
  rerun: string;
} | null;

/** Starts a re-run of a recorded one-shot run (see {@link RerunOptions}); `rerunResult` waits for it. */
export async function startRerun(client: Client, workflowId: string, options: RerunOptions): Promise<Rerun> {
  // Not found is answered here; an unreachable server is not a missing run: it goes on as it is.
  const found = await lookupWorkflow(client, workflowId);
  if (!found) throw new ClientError('not_found', `no run "${workflowId}" exists`, workflowId);
  if (found.kind !== 'run')
    throw new ClientError('wrong_kind', `"${workflowId}" is not a one-shot run; only runs can be re-run`, workflowId);
  if (found.running)
    throw new ClientError('invalid', `"${workflowId}" is still running; re-run it once it has ended`, workflowId);
  const handle = client.workflow.getHandle(workflowId);
  const input = await recordedRunInput(await handle.fetchHistory(), client.options.loadedDataConverter);
  const outcome = await runOutcome(handle as AgentRunHandle);
  // The recorded messages come by query, which a worker of the run's task queue answers.
  await requireWorkerFor(client, workflowId);
  const { messages } = await readTranscript(client, workflowId);
  const fromStep = options.fromStep ?? 1;
  const steps = messages.filter((m) => m.role === 'assistant').length;
  if (fromStep < 1 || fromStep > Math.max(steps, 1))
    throw new ClientError(
      'invalid',
      `--from-step must be between 1 and ${Math.max(steps, 1)}: the run made ${steps} model call${steps === 1 ? '' : 's'}`,
      workflowId,
    );
  const seed: RerunSeed = { of: workflowId, fromStep, messages: messagesBefore(messages, fromStep) };
  if (!options.liveTools)
    seed.toolCalls = outcome.toolExecutions
      .filter((e) => e.result !== undefined)
      .map((e) => ({ name: e.name, arguments: e.arguments, result: e.result, error: e.error }));
  const rerunId = options.workflowId ?? `${workflowId}-rerun-${randomBytes(3).toString('hex')}`;
  // Its workspace starts as the run's was before that step, in a copy of its own (see adoptStartingState).
  const start = workspaceAt(seed.messages);
  const adopted = await adoptStartingState(client, start, rerunId, options.blobStore);
  if (start && adopted !== start)
    seed.messages = seed.messages.map((m) =>
      'workspace' in m && m.workspace === start ? { ...m, workspace: adopted } : m,
    );
  const { rerun: _previous, images: _images, ...original } = input;
  const rerunInput: AgentInput = { ...original, rerun: seed };
  if (options.model) rerunInput.modelSettings = { ...original.modelSettings, model: options.model };
  if (options.system !== undefined) rerunInput.system = options.system;
  const newHandle = await startAgentRun(client, rerunInput, {
    taskQueue: options.taskQueue,
    workflowId: rerunId,
  });
  return { handle: newHandle, of: workflowId, fromStep, recorded: { messages, outcome } };
}

/** Waits for a re-run and compares its steps with the recording. */
export async function rerunResult(
  client: Client,
  rerun: Rerun,
): Promise<{ outcome: RunOutcome; diverged: Divergence }> {
  const outcome = await runOutcome(rerun.handle);
  const { messages } = await readTranscript(client, rerun.handle.workflowId);
  return { outcome, diverged: divergence(rerun.recorded.messages, messages, rerun.fromStep) };
}

/** The messages before assistant message number `step` (1-based). */
export function messagesBefore(messages: readonly ChatMessage[], step: number): ChatMessage[] {
  let seen = 0;
  for (let i = 0; i < messages.length; i++) {
    if (messages[i].role === 'assistant' && ++seen === step) return messages.slice(0, i);
  }
  return [...messages];
}

/** The first model call, from `fromStep` on, whose reply differs between the two transcripts. */
export function divergence(
  recorded: readonly ChatMessage[],
  rerun: readonly ChatMessage[],
  fromStep: number,
): Divergence {
  const a = recorded.filter((m) => m.role === 'assistant');
  const b = rerun.filter((m) => m.role === 'assistant');
  for (let i = fromStep - 1; i < Math.max(a.length, b.length); i++) {
    const x = a[i] ? stepText(a[i]) : '(no such step: the recorded run had ended)';
    const y = b[i] ? stepText(b[i]) : '(no such step: the re-run had ended)';
    if (x !== y) return { step: i + 1, recorded: x, rerun: y };
  }
  return null;
}

/** A model reply as one line: its tool calls, or its text. */
function stepText(m: ChatMessage): string {
  if (m.role === 'assistant' && m.tool_calls?.length)
    return m.tool_calls.map((c) => `${c.function.name}(${canonical(c.function.arguments)})`).join(', ');
  return typeof m.content === 'string' ? m.content : '';
}

function canonical(args: string): string {
  try {
    return JSON.stringify(sortKeys(JSON.parse(args)));
  } catch {
    return args;
  }
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === 'object')
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, sortKeys((v as Record<string, unknown>)[k])]),
    );
  return v;
}
