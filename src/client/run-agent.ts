import { createHash, randomBytes } from 'node:crypto';
import { WorkflowFailedError, type Client, type WorkflowHandle } from '@temporalio/client';
import {
  ApplicationFailure,
  CancelledFailure,
  TemporalFailure,
  TerminatedFailure,
  TimeoutFailure,
  WorkflowExecutionAlreadyStartedError,
} from '@temporalio/common';
import type { ZodType } from 'zod';
import { outputJsonSchema } from '../models/json-schema';
import { agentWorkflowId, runSummary } from '../core/context/summaries';
import { fairnessWeightProblem, tenantWorkflowId } from '../core/fleet/tenants';
import { validateAgentInput, workflowIdProblem } from '../core/run/run-input';
import type { AgentInput, JsonSchemaObject } from '../core/state/run-options';
import type { AgentResult, AgentWorkflowResult, TurnResult } from '../core/state/run-results';
import { AGENT_WORKFLOW_TYPE } from '../contracts/definitions';
import { ClientError } from './client-error';
import { restoreToolResults } from './tool-results';
import { withOutageRetries, type OutageOptions } from './outages';
import { describeKind, lookupWorkflow } from './workflow-lookup';
import { storedImages } from './stored-images';
import { explainTenantStart, tenantStartOptions } from './tenant-scope';
import type { BlobStore } from '../storage/blob-store';
import type { ImageInput } from '../storage/images';

/**
 * A run's outcome as clients report it: the workflow result, or `failed` with the reason (see
 * {@link TurnResult}). `O` is the type of `output` when the run's schema is known to the caller.
 */
export type RunOutcome<O = unknown> = TurnResult<O>;

/**
 * A run as clients ask for it: the workflow input, with `output` as a zod schema or a JSON
 * Schema, and `images` as URLs, data URLs or bytes (stored in the blob store before the run
 * starts; the workflow gets references).
 */
export type RunRequest = Omit<AgentInput, 'output' | 'images'> & {
  output?: ZodType | JsonSchemaObject;
  images?: readonly ImageInput[];
};

/** The agent workflow as a client sees it, with the type of its structured output. */
export type AgentRunWorkflow<O = unknown> = (input: AgentInput) => Promise<AgentWorkflowResult<O>>;

/** A handle on an agent run; {@link runOutcome} gives its outcome, typed by the run's output schema. */
export type AgentRunHandle<O = unknown> = WorkflowHandle<AgentRunWorkflow<O>>;

/**
 * What a client needs of an agent's definition (`defineAgent`): its name, and its output schema
 * for the type of the outcome's `output`. Structural, so clients never import worker code.
 */
export interface NamedAgent<O = unknown> {
  readonly name: string;
  readonly output?: ZodType<O>;
}

/** Where a run starts. */
export interface StartRunOptions {
  taskQueue: string;
  workflowId?: string;
  /**
   * A key the caller gives each request it may send again (an HTTP `Idempotency-Key`): a run
   * started again with the same key is the same run (its id derives from the key), whether it is
   * still running or has finished, so a retried request never runs the agent twice.
   */
  idempotencyKey?: string;
  /** Where the run's images are stored (default: the file store `AGENT_BLOB_DIR` names); the worker must read the same store. */
  blobStore?: BlobStore;
  /** The tenant's share when the task queue backs up (default 1; see `tenants weight` for one set on the queue). */
  fairnessWeight?: number;
  /**
   * The tenant in whose id space the run's id is made (`acme:agent-...`, see `tenantWorkflowId`),
   * as the doors that act for a tenant's token start runs: the same `idempotencyKey` of two
   * tenants then names two runs. A given `workflowId` is taken as it is.
   */
  idSpace?: string;
}

/**
 * Starts an agent run. The workflow id is readable (`agent-what-is-the-...-k3x9q2`) unless given,
 * or random (`agent-3f9a2c81d0e4`) when the client encrypts payloads.
 * An id that is already running is refused with a {@link ClientError} (`already_running`), and
 * input the workflow would refuse (an empty or too long message, bad options) with one of kind
 * `invalid`, before anything starts. A zod `output` schema goes to the workflow as JSON Schema.
 *
 * Given an agent definition (`startAgentRun(client, supportAgent, 'Where is A-1001?', { taskQueue })`),
 * the run uses that agent by name, and the handle (and {@link runOutcome}) carries the type of its
 * `output` schema; so does a zod `output` given in the request. The worker must serve the agent.
 */
export function startAgentRun<O>(
  client: Client,
  agent: NamedAgent<O>,
  request: string | Omit<RunRequest, 'agent' | 'output'>,
  options: StartRunOptions,
): Promise<AgentRunHandle<O>>;
/** Starts a run whose `output` is a zod schema: the outcome's `output` has its type. */
export function startAgentRun<O>(
  client: Client,
  request: Omit<RunRequest, 'output'> & { output: ZodType<O> },
  options: StartRunOptions,
): Promise<AgentRunHandle<O>>;
/** Starts a run; `O` types its `output` when you know the named agent's schema (`startAgentRun<Answer>(...)`). */
export function startAgentRun<O = unknown>(
  client: Client,
  request: RunRequest,
  options: StartRunOptions,
): Promise<AgentRunHandle<O>>;
export async function startAgentRun(
  client: Client,
  agentOrRequest: NamedAgent | RunRequest,
  requestOrOptions: string | RunRequest | StartRunOptions,
  maybeOptions?: StartRunOptions,
): Promise<AgentRunHandle<unknown>> {
  let request: RunRequest;
  let options: StartRunOptions;
  if (maybeOptions !== undefined) {
    const given =
      typeof requestOrOptions === 'string' ? { message: requestOrOptions } : (requestOrOptions as RunRequest);
    request = { ...given, agent: (agentOrRequest as NamedAgent).name };
    options = maybeOptions;
  } else {
    request = agentOrRequest as RunRequest;
    options = requestOrOptions as StartRunOptions;
  }
  const idProblem =
    options.workflowId === undefined ? undefined : workflowIdProblem(options.workflowId, 'the workflow id');
  if (idProblem) throw new ClientError('invalid', idProblem);
  const { output, images, ...rest } = request;
  const input: AgentInput =
    output === undefined ? rest : { ...rest, output: isZod(output) ? outputJsonSchema(output) : output };
  // The workflow checks its input too, but by then the input is in its history: refuse it here,
  // before its images are stored (a refused run leaves no blob), and with them after.
  const early = validateAgentInput(input);
  if (early.length) throw new ClientError('invalid', early.join('; '));
  // The bytes go to the blob store and the run gets references: a history never holds an image.
  const refs = await storedImages(client, images, options.blobStore);
  if (refs) input.images = refs;
  const problems = [
    ...validateAgentInput(input),
    ...[fairnessWeightProblem(options.fairnessWeight)].filter((p): p is string => p !== undefined),
  ];
  if (problems.length) throw new ClientError('invalid', problems.join('; '));
  // Ids are never encrypted: a client that encrypts payloads gets ids without words of the message.
  const made =
    options.idempotencyKey !== undefined
      ? `agent-${createHash('sha256').update(options.idempotencyKey).digest('hex').slice(0, 24)}`
      : encryptsPayloads(client)
        ? `agent-${randomBytes(6).toString('hex')}`
        : agentWorkflowId(input.message, randomBytes(4).toString('hex').slice(0, 6));
  const workflowId =
    options.workflowId ?? (options.idSpace !== undefined ? tenantWorkflowId(options.idSpace, made) : made);
  const again = options.idempotencyKey !== undefined;
  try {
    return await client.workflow.start<AgentRunWorkflow>(AGENT_WORKFLOW_TYPE, {
      taskQueue: options.taskQueue,
      workflowId,
      args: [input],
      staticSummary: runSummary(input.message),
      ...tenantStartOptions({
        tenant: input.tenant,
        priorityKey: input.priority,
        fairnessWeight: options.fairnessWeight,
      }),
      // With a key: the run of the first request, running or finished, answers the next ones.
      ...(again ? { workflowIdConflictPolicy: 'USE_EXISTING', workflowIdReusePolicy: 'REJECT_DUPLICATE' } : {}),
    });
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw explainTenantStart(client, err);
    if (again) return client.workflow.getHandle(workflowId) as AgentRunHandle<unknown>;
    const found = await lookupWorkflow(client, workflowId).catch(() => undefined);
    const what = !found || found.kind === 'run' ? 'a run' : describeKind(found);
    throw new ClientError(
      'already_running',
      `${what} with id "${workflowId}" is already running; choose another id, or follow it by its id`,
      workflowId,
    );
  }
}

/** Whether the client's payloads go through a codec (encryption): then nothing readable may go where codecs do not reach. */
export function encryptsPayloads(client: Client): boolean {
  return (client.options.dataConverter?.payloadCodecs?.length ?? 0) > 0;
}

/**
 * Waits for a run and maps a failed workflow to `status: "failed"` with its partial result (a
 * cancelled one to `cancelled`). Rides out a Temporal outage of up to `budgetMs` (default 10
 * minutes): the run goes on in the server, and the caller gets its real outcome afterwards.
 */
export async function runOutcome<O = unknown>(
  handle: AgentRunHandle<O>,
  options: OutageOptions = {},
): Promise<RunOutcome<O>> {
  try {
    // The outputs the result leaves out are read from the run's history.
    return (await withOutageRetries(
      async () => restoreToolResults(handle, await handle.result()),
      options,
    )) as RunOutcome<O>;
  } catch (err) {
    if (!(err instanceof WorkflowFailedError)) throw err;
    const failure = innermostApplicationFailure(err.cause);
    const partial = (failure?.details?.[0] ?? {}) as Partial<AgentResult>;
    const common = {
      workflowId: handle.workflowId,
      content: null,
      toolExecutions: partial.toolExecutions ?? [],
      iterations: partial.iterations ?? 0,
      usage: partial.usage ?? { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
    };
    if (err.cause instanceof CancelledFailure) return { ...common, status: 'cancelled' };
    return {
      ...common,
      status: 'failed',
      error: failure?.message ?? closeReason(err),
      errorType: failure?.type ?? closeType(err),
    };
  }
}

function closeReason(err: WorkflowFailedError): string {
  if (err.cause instanceof TerminatedFailure)
    return `the run was terminated${err.cause.message ? `: ${err.cause.message}` : ''}`;
  if (err.cause instanceof TimeoutFailure) return 'the run timed out (its workflow execution timeout)';
  return err.cause?.message ?? err.message;
}

function closeType(err: WorkflowFailedError): string {
  if (err.cause instanceof TerminatedFailure) return 'Workflow.Terminated';
  if (err.cause instanceof TimeoutFailure) return 'Workflow.TimedOut';
  return 'Workflow.Failed';
}

function isZod(schema: ZodType | JsonSchemaObject): schema is ZodType {
  return typeof (schema as { safeParse?: unknown }).safeParse === 'function';
}

function innermostApplicationFailure(err: unknown): ApplicationFailure | undefined {
  // The workflow's own failure carries the details; its causes say where it came from.
  if (err instanceof ApplicationFailure) return err;
  if (err instanceof TemporalFailure && err.cause) return innermostApplicationFailure(err.cause);
  return undefined;
}
