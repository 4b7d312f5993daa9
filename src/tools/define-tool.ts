import type { PolicyPrincipal } from '../core/state/policy-types';
import type { ToolWorkspace } from '../workspace/workspace-host';
import type { z } from 'zod';
import type { JsonSchema } from '../models/json-schema';
import type { ModelQuestion } from '../contracts/activity-interface';

/** What a tool's `execute` gets besides its arguments. */
export interface ToolContext {
  /**
   * The conversation (memory id) the call belongs to, as LangChain4j's `@ToolMemoryId` gives it:
   * the conversation workflow's id, or the run's workflow id for a one-shot run.
   */
  conversationId: string;
  /** The agent workflow (conversation) that called the tool. */
  workflowId: string;
  /**
   * The tenant the run works for (see `AgentInput.tenant`), or undefined without one: a tool that
   * acts for a customer picks that customer's account, keys and data by it.
   */
  tenant?: string;
  /**
   * The user the run works for (see `AgentInput.user`), or undefined without one: the scope of
   * the memory tools (`remember`, `recall`, `forget`), and of whatever a tool keeps per person.
   */
  user?: string;
  /**
   * Under policies (docs/policies.md): the agents this call works for, outermost first, the
   * calling agent last. A tool that hands work to another agent (over A2A, MCP) passes it on, so
   * that agent runs under these agents' policies as well as its own: delegating never widens.
   */
  delegatedBy?: PolicyPrincipal[];
  runId: string;
  /** The LLM's id for this call. */
  toolCallId: string;
  /**
   * Stable across Temporal retries of this same call, different for every other call: pass it
   * to payment APIs and the like so a retried tool does its side effect once.
   */
  idempotencyKey: string;
  /** 1 on the first try, 2 on the first retry, ... */
  attempt: number;
  /** Aborted when the run cancels this call (time limit, cancellation). */
  signal: AbortSignal;
  /**
   * What this call saved with {@link ToolContext.checkpoint} in an earlier attempt, so that an
   * attempt after a crash picks up where that one was (a remote task it follows, say) instead of
   * starting over; undefined on a first attempt.
   */
  resumeFrom?: unknown;
  /**
   * Saves where the call stands, durably (with the activity's heartbeat): a later attempt of the
   * same call gets it as `resumeFrom`. Small plain JSON. Does nothing in a local tool.
   */
  checkpoint(progress: unknown): void;
  /**
   * Asks a person, in the middle of the call, and suspends the call until they answer (a remote
   * agent needs a detail, a payment needs a second yes). The question waits in the run like an
   * approval (`approval_requested` with `question`; answered with an approval and its reason, or
   * declined with a rejection) and durably, for days if need be; then the tool is called again,
   * with the answer in {@link ToolContext.answer} and `progress` (default: what it saved with
   * `checkpoint`) in {@link ToolContext.resumeFrom}. Never returns. Outside a durable run (a tool
   * run directly), the call ends with an error saying what it asked.
   */
  askPerson(question: string, progress?: unknown, form?: PersonForm): never;
  /**
   * Asks the run's model, in the middle of the call (an MCP server's sampling request): the run
   * makes the model call (recorded, counted in its usage and budget), then calls the tool again
   * with the reply in {@link ToolContext.answer} (`text`, and `model`). Never returns.
   */
  askModel(question: ModelQuestion, progress?: unknown): never;
  /**
   * Tells the run how far the call is: a `tool_progress` event on its stream (at most one a
   * second reaches it; the latest wins), and a heartbeat, so a long call shows it is alive. MCP
   * tools report their server's progress notifications this way. Does nothing in a local tool.
   */
  reportProgress(progress: { progress: number; total?: number; message?: string }): void;
  /**
   * A secret of the run's tenant (an API key set with `durable-agents credentials set <name>
   * --tenant T`; for a run without a tenant, one set without `--tenant`), or undefined when none is
   * set: a tool that acts for a customer uses that customer's key. Read on the worker; never in
   * the run's history.
   */
  credential(name: string): Promise<string | undefined>;
  /**
   * A person's answer to what this call asked with {@link ToolContext.askPerson}: `approved`
   * false when they declined, `text` what they said (an approval's or rejection's reason).
   */
  answer?: PersonAnswer;
  /**
   * The run's workspace, for a tool defined with `workspace: true` (and the built-in workspace
   * tools): its directory on this worker, at the committed state, and the sandbox to run
   * commands in. Undefined for other tools and runs without a workspace.
   */
  workspace?: ToolWorkspace;
}

/**
 * What a person is asked to fill in, when a tool's question is a form (an MCP server's
 * elicitation): the run announces it as an `mcp_elicitation` event, for clients that draw it.
 */
export interface PersonForm {
  server: string;
  message: string;
  /** The form's fields (a JSON Schema object of flat properties). */
  requestedSchema?: Record<string, unknown>;
  /** A URL to open instead (URL elicitation). */
  url?: string;
}

/** A person's answer to a tool's question (see {@link ToolContext.askPerson}). */
export interface PersonAnswer {
  approved: boolean;
  text?: string;
  /** Set when the model answered (see {@link ToolContext.askModel}): the model that wrote `text`. */
  model?: string;
}

/**
 * Thrown by {@link ToolContext.askPerson}: the call stops here and its run asks a person. Tools
 * must let it through (a `catch` that swallows every error would keep the call from asking).
 */
export class PersonAsked extends Error {
  constructor(
    readonly question: string,
    readonly progress?: unknown,
    readonly form?: PersonForm,
  ) {
    super(`the tool asks a person: ${question}`);
    this.name = 'PersonAsked';
  }
}

/** Thrown by {@link ToolContext.askModel}: the call stops here and its run asks the model. */
export class ModelAsked extends Error {
  constructor(
    readonly question: ModelQuestion,
    readonly progress?: unknown,
  ) {
    super('the tool asks the model');
    this.name = 'ModelAsked';
  }
}

/** `'to_llm'`: results go back to the LLM (default). `'immediate'`: the run may end right after (see docs/agents-and-tools.md, run options). */
export type ReturnBehavior = 'to_llm' | 'immediate';

/** How a tool is scheduled and supervised; the same for zod and JSON Schema tools. */
export interface ToolSettings {
  name: string;
  description: string;
  returnBehavior?: ReturnBehavior;
  /** Per-attempt timeout, e.g. `"30s"` or ms. Default 60s. */
  timeout?: string | number;
  /** Temporal retries when `execute` throws. Default: 3 attempts, 1s apart, doubling. */
  retry?: { maximumAttempts?: number; initialInterval?: string | number };
  /** Every call waits for a person to approve or reject it (see docs/approvals.md). */
  needsApproval?: boolean;
  /**
   * Run calls as Temporal local activities: inside the workflow task, on the worker that runs the
   * agent, with no round trip through the server. An agent step then costs one model activity
   * instead of two activities, which makes fast tools noticeably faster and lighter on the server.
   * Only for fast calls (well under the 10 s workflow task timeout; lookups, computations, a quick
   * HTTP GET). The trade-off: a local call does not show as an activity in the UI (a marker
   * does); it has no heartbeats, so a crashed worker is noticed by the workflow task timeout
   * instead; retries run on the same worker; and it cannot be routed to another task queue.
   * Default false (a normal activity).
   */
  local?: boolean;
  /**
   * The tool works in the run's workspace (`ctx.workspace`): each call gets the state the calls
   * before it committed, and what it changes there is saved and committed with its result. A run
   * with such a tool gets a workspace (see docs/workspaces.md).
   */
  workspace?: boolean;
}

/** A tool's definition. `parameters` is a zod object; its `.describe()` texts reach the LLM. */
export interface ToolDefinition<P extends z.ZodObject = z.ZodObject, R = unknown> extends ToolSettings {
  parameters: P;
  execute: (args: z.infer<P>, ctx: ToolContext) => R | Promise<R>;
}

/**
 * A tool described by a JSON Schema instead of zod (LangChain4j's `ToolSpecification` plus
 * `ToolExecutor`), e.g. loaded from a database or configuration. Arguments are checked against
 * the schema's `required` properties and their basic types before `execute` sees them.
 */
export interface JsonSchemaToolDefinition<R = unknown> extends ToolSettings {
  parameters: JsonSchema;
  execute: (args: Record<string, unknown>, ctx: ToolContext) => R | Promise<R>;
}

/** Either kind of tool definition. */
export type AnyToolDefinition = ToolDefinition<any, any> | JsonSchemaToolDefinition<any>;

/** A tool as the registry holds it. */
export type Tool = ToolDefinition<z.ZodObject, unknown>;

const NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * Defines a tool. Checks the parts the LLM depends on now, at definition time, rather than on the
 * first call in production.
 */
export function defineTool<P extends z.ZodObject, R>(definition: ToolDefinition<P, R>): ToolDefinition<P, R> {
  checkSettings(definition);
  if (!isZodTool(definition) || definition.parameters.type !== 'object') {
    throw new TypeError(
      `tool "${definition.name}": "parameters" must be a zod object, e.g. z.object({ x: z.number() })`,
    );
  }
  return definition;
}

/** Defines a tool from a JSON Schema and an executor, without zod. */
export function defineJsonSchemaTool<R>(definition: JsonSchemaToolDefinition<R>): JsonSchemaToolDefinition<R> {
  checkSettings(definition);
  const p = definition.parameters as Record<string, unknown> | undefined;
  if (!p || typeof p !== 'object' || Array.isArray(p) || (p.type !== undefined && p.type !== 'object')) {
    throw new TypeError(
      `tool "${definition.name}": "parameters" must be a JSON Schema object, e.g. { type: "object", properties: { id: { type: "string" } } }`,
    );
  }
  if (p.properties !== undefined && (typeof p.properties !== 'object' || p.properties === null))
    throw new TypeError(`tool "${definition.name}": "parameters.properties" must be an object`);
  if (p.required !== undefined && !(Array.isArray(p.required) && p.required.every((r) => typeof r === 'string'))) {
    throw new TypeError(`tool "${definition.name}": "parameters.required" must be an array of property names`);
  }
  return definition;
}

/** Whether a definition uses zod parameters. */
export function isZodTool(definition: AnyToolDefinition): definition is ToolDefinition<any, any> {
  return typeof (definition.parameters as { safeParse?: unknown } | undefined)?.safeParse === 'function';
}

function checkSettings(definition: ToolSettings & { execute?: unknown }): void {
  if (!NAME.test(definition.name)) {
    throw new TypeError(`invalid tool name "${definition.name}": use 1-64 letters, digits, "_" or "-" (OpenAI's rule)`);
  }
  if (!definition.description?.trim())
    throw new TypeError(`tool "${definition.name}" needs a description: the LLM chooses tools by it`);
  if (typeof definition.execute !== 'function')
    throw new TypeError(`tool "${definition.name}" needs an execute function`);
  if (definition.local !== undefined && typeof definition.local !== 'boolean')
    throw new TypeError(`tool "${definition.name}": local must be true or false`);
  if (definition.workspace !== undefined && typeof definition.workspace !== 'boolean')
    throw new TypeError(`tool "${definition.name}": workspace must be true or false`);
  if (definition.workspace && definition.local)
    throw new TypeError(
      `tool "${definition.name}": a workspace tool cannot be local (its workspace is restored and saved around each call, which takes longer than a workflow task may)`,
    );
  const rb = definition.returnBehavior;
  if (rb !== undefined && rb !== 'to_llm' && rb !== 'immediate') {
    throw new TypeError(`tool "${definition.name}": returnBehavior must be "to_llm" or "immediate"`);
  }
}
