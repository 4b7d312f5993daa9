import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { Client } from '@temporalio/client';
import { isSummary, summaryPrompt } from '../core/context/compaction';
import type { SummarizeInput, SummaryReply } from '../contracts/activity-interface';
import type { ChatModel } from '../models/chat-model';
import type { ModelConfig } from '../models/model-config';
import { ModelGate } from './model-gate';
import { defaultPricing, createConversationLoader } from './call-model';
import type { ConversationLoader } from './conversation-loader';
import { keepHeartbeating } from './heartbeat';
import { modelCallFailure } from './model-failure';

/** The longest summary a compaction asks for, in tokens: room for the facts, far under any budget. */
const SUMMARY_MAX_TOKENS = 1_500;

/**
 * Builds the summarising activity of compaction: it reads the messages to summarise by reference
 * (as a model call does, from the worker's cache or the workflow), folds in the summary among
 * them, and asks the model for a new one, without tools. Failures are the adapter's, classified
 * at its edge like any model call's; Temporal retries the retryable ones.
 */
export function createSummarizeMessages(deps: {
  client?: Client;
  config: ModelConfig;
  model: ChatModel;
  /** The seam every model request goes through: a summary of a tenant's run reserves, waits its turn and is charged like an agent step. Default: prices only. */
  gate?: ModelGate;
  conversations?: ConversationLoader;
}) {
  const gate = deps.gate ?? new ModelGate(defaultPricing(deps.config));
  const conversations = deps.conversations ?? createConversationLoader(deps.client);
  return async function summarizeMessages(input: SummarizeInput): Promise<SummaryReply> {
    if (!deps.config.configured)
      throw ApplicationFailure.nonRetryable('no LLM is configured on this worker', 'ModelCall.NotConfigured');
    const stop = keepHeartbeating();
    try {
      const messages = await conversations.load({
        workflowId: input.workflowId,
        runId: input.runId,
        messageCount: input.to,
        pinned: 0,
        from: input.from,
        revision: input.revision,
      });
      const previous = [...messages].reverse().find(isSummary)?.content ?? undefined;
      const route = deps.model.route(input.settings?.model);
      // The run's model, without its thinking (Claude wants max_tokens above the thinking budget)
      // or fallbacks: a summary is a short answer.
      const { thinking: _thinking, fallbackModels: _fallbacks, ...settings } = input.settings ?? {};
      const sent = [{ role: 'user' as const, content: summaryPrompt(previous, messages) }];
      const signal = Context.current().cancellationSignal;
      const reply = await gate.call(
        { route, messages: sent, maxTokens: SUMMARY_MAX_TOKENS, tenant: input.tenant, signal },
        () =>
          deps.model.generate(sent, {
            route,
            settings: { ...settings, maxTokens: SUMMARY_MAX_TOKENS },
            signal,
            ...(input.timeoutMs ? { deadlineMs: input.timeoutMs } : {}),
          }),
      );
      const text = (reply.content ?? '').trim();
      // Once more at most: a model that writes nothing twice will not write a summary (the run
      // then drops the messages instead; eight attempts over a minute and a half would only wait).
      if (!text)
        throw ApplicationFailure.create({
          message: `the model ${route.name} wrote an empty summary`,
          type: 'ModelCall.InvalidResponse',
          nonRetryable: Context.current().info.attempt >= 2,
        });
      return { text, usage: reply.usage, model: route.name };
    } catch (err) {
      throw modelCallFailure(err);
    } finally {
      stop();
    }
  };
}
