import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { SampleInput, SummaryReply } from '../contracts/activity-interface';
import type { ChatModel } from '../models/chat-model';
import type { ModelConfig } from '../models/model-config';
import { ModelGate } from './model-gate';
import { defaultPricing } from './call-model';
import { keepHeartbeating } from './heartbeat';
import { modelCallFailure } from './model-failure';

/** The most a tool's question may have the model write, in tokens, whatever it asks. */
const SAMPLE_MAX_TOKENS = 4_000;

/**
 * Builds the activity that answers a running tool's question to the model (an MCP server's
 * sampling request): the tool's own short exchange goes to the run's model with no tools, and
 * the reply's text comes back with its usage and cost, which the run counts. Failures are the
 * adapter's, classified at its edge like any model call's.
 */
export function createSampleModel(deps: {
  config: ModelConfig;
  model: ChatModel;
  /** The seam every model request goes through: a tool's model call in a tenant's run reserves, waits its turn and is charged like an agent step. Default: prices only. */
  gate?: ModelGate;
}) {
  const gate = deps.gate ?? new ModelGate(defaultPricing(deps.config));
  return async function sampleModel(input: SampleInput): Promise<SummaryReply> {
    if (!deps.config.configured)
      throw ApplicationFailure.nonRetryable('no LLM is configured on this worker', 'ModelCall.NotConfigured');
    const stop = keepHeartbeating();
    try {
      const route = deps.model.route(input.settings?.model);
      const { thinking: _thinking, fallbackModels: _fallbacks, ...settings } = input.settings ?? {};
      const messages = [
        ...(input.system ? [{ role: 'system' as const, content: input.system }] : []),
        ...input.messages.map((m) => ({ role: m.role, content: m.content })),
      ];
      const maxTokens = Math.min(input.maxTokens ?? SAMPLE_MAX_TOKENS, SAMPLE_MAX_TOKENS);
      const signal = Context.current().cancellationSignal;
      const reply = await gate.call({ route, messages, maxTokens, tenant: input.tenant, signal }, () =>
        deps.model.generate(messages, {
          route,
          settings: { ...settings, maxTokens },
          signal,
          ...(input.timeoutMs ? { deadlineMs: input.timeoutMs } : {}),
        }),
      );
      return { text: (reply.content ?? '').trim(), usage: reply.usage, model: route.name };
    } catch (err) {
      throw modelCallFailure(err);
    } finally {
      stop();
    }
  };
}
