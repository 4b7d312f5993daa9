import { randomUUID } from 'node:crypto';
import { modelConfigFromEnv, type ModelConfig } from './model-config';
import type { ChatModel } from './chat-model';
import { createChatModel } from './create-chat-model';
import { toolErrorText, type ToolCall, type ToolOutcome } from '../../core';
import type { ToolContext } from '../tools/define-tool';
import type { ToolRegistry } from '../tools/registry';
import { prepareToolCall, toolOutcomeOf } from '../tools/tool-call';

export type { ChatModel, GenerateOptions, ToolSpec } from './chat-model';

/**
 * The low-level API, for your own loop outside any workflow (LangChain4j's `ChatLanguageModel`
 * and tool executor): one model call, one tool call. The same adapters as the activities, so the
 * same requests, reply parsing and failure types.
 */

/**
 * A {@link ChatModel} for the configured providers: each call goes to the adapter of its model's
 * provider prefix (`anthropic:...`, or none for the OpenAI-compatible endpoint). Default:
 * `OPENAI_BASE_URL`, `OPENAI_API_KEY`, `ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL`, `AGENT_MODEL`.
 * Offer tools with `registry.specs(names)`.
 */
export function chatModel(config: ModelConfig = modelConfigFromEnv()): ChatModel {
  return createChatModel(config);
}

/**
 * Runs one tool call from a model reply against a registry and returns what the LLM should read
 * next. Everything the LLM can fix, and a tool that throws, comes back as an error outcome
 * (`error: true`, `result` starting with `Error:`), never as an exception. No retries.
 */
export async function executeToolCall(
  registry: ToolRegistry,
  call: ToolCall,
  context: Partial<ToolContext> = {},
): Promise<ToolOutcome> {
  const prepared = prepareToolCall(registry, call.function.name, call.function.arguments);
  if (!prepared.ok) return prepared.outcome;
  const id = context.workflowId ?? `local-${randomUUID()}`;
  const ctx: ToolContext = {
    conversationId: context.conversationId ?? id,
    workflowId: id,
    runId: context.runId ?? '',
    toolCallId: call.id,
    idempotencyKey: context.idempotencyKey ?? `${id}/${call.id}`,
    attempt: context.attempt ?? 1,
    signal: context.signal ?? new AbortController().signal,
  };
  try {
    return await toolOutcomeOf(await registry.execute(call.function.name, prepared.args, ctx));
  } catch (err) {
    return {
      result: toolErrorText(`${call.function.name} failed: ${err instanceof Error ? err.message : String(err)}`),
      error: true,
    };
  }
}
