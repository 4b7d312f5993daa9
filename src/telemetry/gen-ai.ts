import { SpanKind, SpanStatusCode, type Span } from '@opentelemetry/api';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { ModelReply } from '../core/messages/model-reply';
import type { ToolOutcome } from '../core/messages/tool-results';
import type { Usage } from '../core/messages/chat-message';
import { agentTracer } from './tracing';

/**
 * Spans and metrics of the agents' own work, following the OpenTelemetry GenAI semantic
 * conventions: a `chat <model>` span per model call and an `execute_tool <name>` span per tool
 * call, children of the activity's span (so of the run's trace), and the agent metrics on the
 * worker's Temporal metric meter (the Prometheus endpoint of `AGENT_METRICS_PORT`, or whatever
 * the runtime exports to). Spans are no-ops until tracing is installed.
 */

/** The conventions' `gen_ai.provider.name` of an adapter's provider. */
function providerName(provider: string | undefined): string {
  return provider === 'anthropic' ? 'anthropic' : 'openai';
}

/** Runs one model call inside its GenAI span, and records its latency, tokens and outcome. */
export async function traceModelCall(
  call: { model: string; baseURL: string; agent?: string; provider?: string },
  work: () => Promise<ModelReply>,
): Promise<ModelReply> {
  return traceGenAi(
    'chat',
    call,
    work,
    (reply) => reply.usage,
    (reply) => reply.finishReason,
  );
}

/** Runs one embeddings request (memory's recall by meaning) inside its GenAI span, with its input tokens. */
export async function traceEmbeddings<R>(
  call: { model: string; baseURL: string; provider?: string },
  work: () => Promise<R>,
  usageOf: (result: R) => Usage,
): Promise<R> {
  return traceGenAi('embeddings', call, work, usageOf);
}

async function traceGenAi<R>(
  operation: 'chat' | 'embeddings',
  call: { model: string; baseURL: string; agent?: string; provider?: string },
  work: () => Promise<R>,
  usageOf: (result: R) => Usage,
  finishReasonOf?: (result: R) => string | null | undefined,
): Promise<R> {
  const started = Date.now();
  const tags = { model: call.model, ...(call.agent ? { agent: call.agent } : {}) };
  return agentTracer().startActiveSpan(`${operation} ${call.model}`, { kind: SpanKind.CLIENT }, async (span) => {
    span.setAttributes({
      'gen_ai.operation.name': operation,
      // The semantic conventions' provider names: `openai` (Chat Completions and Responses), `anthropic`.
      'gen_ai.provider.name': providerName(call.provider),
      'gen_ai.system': providerName(call.provider),
      'gen_ai.request.model': call.model,
      ...serverAttributes(call.baseURL),
      ...(call.agent ? { 'gen_ai.agent.name': call.agent } : {}),
    });
    try {
      const result = await work();
      const u = usageOf(result);
      const finishReason = finishReasonOf?.(result);
      span.setAttributes({
        'gen_ai.usage.input_tokens': u.promptTokens,
        'gen_ai.usage.output_tokens': u.completionTokens,
        ...(u.cachedPromptTokens ? { 'gen_ai.usage.cache_read.input_tokens': u.cachedPromptTokens } : {}),
        ...(u.cacheWriteTokens ? { 'gen_ai.usage.cache_creation.input_tokens': u.cacheWriteTokens } : {}),
        ...(u.reasoningTokens ? { 'gen_ai.usage.reasoning.output_tokens': u.reasoningTokens } : {}),
        ...(u.costUsd !== undefined ? { 'durable_agents.cost_usd': u.costUsd } : {}),
        ...(finishReason ? { 'gen_ai.response.finish_reasons': [finishReason] } : {}),
      });
      const meter = metrics();
      meter?.modelLatency.record(Date.now() - started, { ...tags, outcome: 'ok' });
      meter?.inputTokens.add(u.promptTokens, tags);
      meter?.outputTokens.add(u.completionTokens, tags);
      if (u.cachedPromptTokens) meter?.cachedInputTokens.add(u.cachedPromptTokens, tags);
      if (u.reasoningTokens) meter?.reasoningTokens.add(u.reasoningTokens, tags);
      // Counters count whole numbers: the cost goes in millionths of a dollar.
      if (u.costUsd) meter?.costMicroUsd.add(Math.round(u.costUsd * 1_000_000), tags);
      return result;
    } catch (err) {
      fail(span, err);
      metrics()?.modelLatency.record(Date.now() - started, { ...tags, outcome: errorType(err) });
      throw err;
    } finally {
      span.end();
    }
  });
}

/** Runs one tool call inside its GenAI span, and counts tool errors by tool. */
export async function traceToolCall(
  call: { name: string; callId: string },
  work: () => Promise<ToolOutcome & { toolCallId?: string }>,
): Promise<ToolOutcome & { toolCallId?: string }> {
  return agentTracer().startActiveSpan(`execute_tool ${call.name}`, { kind: SpanKind.INTERNAL }, async (span) => {
    span.setAttributes({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': call.name,
      'gen_ai.tool.call.id': call.callId,
      'gen_ai.tool.type': 'function',
    });
    try {
      const outcome = await work();
      if (outcome.error) {
        // An error result goes back to the LLM: the call worked, the tool did not.
        span.setAttribute('error.type', 'tool_error');
        span.setStatus({ code: SpanStatusCode.ERROR, message: 'the tool returned an error' });
        metrics()?.toolErrors.add(1, { tool: call.name, kind: 'result' });
      }
      return outcome;
    } catch (err) {
      fail(span, err);
      metrics()?.toolErrors.add(1, { tool: call.name, kind: 'failure' });
      throw err;
    } finally {
      span.end();
    }
  });
}

function fail(span: Span, err: unknown): void {
  span.setAttribute('error.type', errorType(err));
  span.recordException(err instanceof Error ? err : new Error(String(err)));
  span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
}

function errorType(err: unknown): string {
  return err instanceof ApplicationFailure && err.type ? err.type : err instanceof Error ? err.name : 'error';
}

function serverAttributes(baseURL: string): Record<string, string | number> {
  try {
    const url = new URL(baseURL);
    return { 'server.address': url.hostname, ...(url.port ? { 'server.port': Number(url.port) } : {}) };
  } catch {
    return {};
  }
}

/** The agent metrics, created once per meter (the worker's), or undefined outside an activity. */
const byMeter = new WeakMap<object, ReturnType<typeof createMetrics>>();
function metrics(): ReturnType<typeof createMetrics> | undefined {
  let meter;
  try {
    meter = Context.current().metricMeter;
  } catch {
    return undefined;
  }
  let m = byMeter.get(meter);
  if (!m) byMeter.set(meter, (m = createMetrics(meter)));
  return m;
}

function createMetrics(meter: Context['metricMeter']) {
  return {
    modelLatency: meter.createHistogram(
      'agent_model_call_latency',
      'int',
      'ms',
      'Latency of one model call attempt, by model and outcome',
    ),
    inputTokens: meter.createCounter('agent_input_tokens', 'tokens', 'Prompt tokens sent to models'),
    outputTokens: meter.createCounter('agent_output_tokens', 'tokens', 'Completion tokens received from models'),
    cachedInputTokens: meter.createCounter(
      'agent_cached_input_tokens',
      'tokens',
      "Prompt tokens read from the provider's prompt cache",
    ),
    reasoningTokens: meter.createCounter('agent_reasoning_tokens', 'tokens', 'Output tokens models spent reasoning'),
    costMicroUsd: meter.createCounter(
      'agent_cost_microusd',
      'microUSD',
      "What model calls cost, in millionths of a US dollar, by the worker's price table",
    ),
    toolErrors: meter.createCounter(
      'agent_tool_errors',
      'errors',
      'Tool calls that failed or returned an error, by tool',
    ),
  };
}
