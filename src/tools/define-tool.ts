import type { z } from 'zod';

/** What a tool's `execute` gets besides its arguments. */
export interface ToolContext {
  /** The agent workflow (conversation) that called the tool. */
  workflowId: string;
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
}

/** `'to_llm'`: results go back to the LLM (default). `'immediate'`: the run may end right after (see README). */
export type ReturnBehavior = 'to_llm' | 'immediate';

/** A tool's definition. `parameters` is a zod object; its `.describe()` texts reach the LLM. */
export interface ToolDefinition<P extends z.ZodObject = z.ZodObject, R = unknown> {
  name: string;
  description: string;
  parameters: P;
  execute: (args: z.infer<P>, ctx: ToolContext) => R | Promise<R>;
  returnBehavior?: ReturnBehavior;
  /** Per-attempt timeout, e.g. `"30s"` or ms. Default 60s. */
  timeout?: string | number;
  /** Temporal retries when `execute` throws. Default: 3 attempts, 1s apart, doubling. */
  retry?: { maximumAttempts?: number; initialInterval?: string | number };
}

/** A tool as the registry holds it. */
export type Tool = ToolDefinition<z.ZodObject, unknown>;

const NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * Defines a tool. Checks the parts the LLM depends on now, at definition time, rather than on the
 * first call in production.
 */
export function defineTool<P extends z.ZodObject, R>(definition: ToolDefinition<P, R>): ToolDefinition<P, R> {
  if (!NAME.test(definition.name)) {
    throw new TypeError(`invalid tool name "${definition.name}": use 1-64 letters, digits, "_" or "-" (OpenAI's rule)`);
  }
  if (!definition.description?.trim()) throw new TypeError(`tool "${definition.name}" needs a description: the LLM chooses tools by it`);
  if (typeof definition.parameters?.safeParse !== 'function' || definition.parameters.type !== 'object') {
    throw new TypeError(`tool "${definition.name}": "parameters" must be a zod object, e.g. z.object({ x: z.number() })`);
  }
  if (typeof definition.execute !== 'function') throw new TypeError(`tool "${definition.name}" needs an execute function`);
  const rb = definition.returnBehavior;
  if (rb !== undefined && rb !== 'to_llm' && rb !== 'immediate') {
    throw new TypeError(`tool "${definition.name}": returnBehavior must be "to_llm" or "immediate"`);
  }
  return definition;
}
