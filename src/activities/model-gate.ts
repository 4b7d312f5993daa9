import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { ChatMessage, ModelReply } from '../core';
import type { ModelCallInput } from '../contracts/activity-interface';
import { estimateTokens } from '../core/memory/compaction';
import type { ModelRoute } from '../models/chat-model';
import type { ModelPricing } from '../models/catalogue';
import { isModelCallError } from '../models/model-error';
import { traceModelCall } from '../telemetry/gen-ai';
import type { TenantBudgets } from './tenant-budgets';
import type { GovernedModel, RateGovernors } from './rate-governors';

/**
 * The one seam every model request of the runtime goes through: an agent's step, a compaction's
 * summary, a memory extraction, a tool's sampling request. Before the provider is asked, the
 * tenant's ledger reserves an estimate (refused once the tenant's budget is spent) and the
 * model's rate governor gives the call its turn; after, the reply is priced, charged to the tenant
 * and settled with the governor; a 429 pauses the model for the fleet; the whole is one GenAI
 * span. So a budget or a rate limit holds for every token the fleet asks for, not only for agent
 * steps (the summaries and extractions once only settled, after the fact, and never waited).
 */
export class ModelGate {
  constructor(
    /** How replies are priced (the model catalogue under the worker's prices). */
    readonly pricing: ModelPricing,
    private readonly budgets?: TenantBudgets,
    private readonly governors?: RateGovernors,
    /** Called before a ledger or a governor is asked: this process's fleet worker must be up. */
    private readonly fleetNeeded?: () => void,
  ) {}

  /**
   * Asks the model through the gate: `ask` sends the request (what the caller streams, checks and
   * classifies is its own), once the tenant's reservation and the model's turn are in.
   */
  async call(request: GatedRequest, ask: () => Promise<ModelReply>): Promise<ModelReply> {
    const { route } = request;
    return traceModelCall(
      { model: route.name, baseURL: route.baseURL, provider: route.provider, agent: request.agent },
      async () => {
        const estimate = estimateOf(request, this.pricing);
        const governed = this.governors?.of(route);
        if ((request.tenant !== undefined && this.budgets) || governed) this.fleetNeeded?.();
        // A tenant's call asks its ledger first: refused (not retried) once the tenant's budget is spent.
        if (request.tenant !== undefined && this.budgets) await this.budgets.reserve(request.tenant, estimate);
        // A limited model's call waits its turn, which the whole fleet's calls of the model share.
        if (governed) await waitTurn(this.governors!, governed, estimate.tokens, request.settings, request.signal);
        let reply: ModelReply;
        try {
          reply = await ask();
        } catch (thrown) {
          // A 429: the model pauses for every worker's calls, for as long as the provider said.
          if (governed && isModelCallError(thrown) && thrown.type === 'ModelCall.RateLimit')
            await this.governors!.pause(governed, thrown.retryAfterMs);
          throw thrown;
        }
        // Who answered, and what it cost: runs count their usage per model.
        reply.model = route.name;
        const cost = this.pricing.cost(route, reply.usage);
        if (cost !== undefined) reply.usage.costUsd = cost;
        // Charged to the tenant once (a repeat of this attempt changes nothing).
        if (request.tenant !== undefined && this.budgets) await this.budgets.settle(request.tenant, reply.usage);
        if (governed) await this.governors!.settle(governed, estimate.tokens, reply.usage.totalTokens);
        return reply;
      },
    );
  }
}

/** One model request, as the gate needs it. */
export interface GatedRequest {
  /** Where it goes. */
  route: ModelRoute;
  /** What is sent: its estimated tokens, with `maxTokens`, are what the tenant's ledger reserves. */
  messages: readonly ChatMessage[];
  /** The most the reply may write; default {@link ASSUMED_OUTPUT_TOKENS}. */
  maxTokens?: number;
  /** The run's tenant, whose budget pays. */
  tenant?: string;
  /** The run's model settings: with fallback models, a turn further off than `maxWaitMs` moves to the next. */
  settings?: ModelCallInput['settings'];
  /** Aborts the wait for a turn (the activity's cancellation, the turn's stop). */
  signal: AbortSignal;
  /** The agent it is for, in its trace. */
  agent?: string;
}

/** Output tokens a call is assumed to write when it gives no `maxTokens`. */
export const ASSUMED_OUTPUT_TOKENS = 1_000;

/** What a call may cost, for its tenant's reservation: the request's tokens as estimated, and an output allowance. */
function estimateOf(request: GatedRequest, pricing: ModelPricing): { tokens: number; usd?: number } {
  const promptTokens = estimateTokens(request.messages);
  const completionTokens = request.maxTokens ?? ASSUMED_OUTPUT_TOKENS;
  const usd = pricing.catalogue.hasPrice(request.route)
    ? pricing.cost(request.route, { promptTokens, completionTokens, totalTokens: promptTokens + completionTokens })
    : undefined;
  return { tokens: promptTokens + completionTokens, ...(usd !== undefined ? { usd } : {}) };
}

/**
 * Waits this call's turn at its model's rate governor. The wait stays within the attempt's time
 * (its start-to-close timeout, less a minute for the call itself); an agent with a next model
 * waits at most its limit's `maxWaitMs` before moving to it (not retried). A turn further off
 * than the attempt can wait fails the attempt with the wait as its retry delay.
 */
async function waitTurn(
  governors: RateGovernors,
  model: GovernedModel,
  tokens: number,
  settings: ModelCallInput['settings'],
  signal: AbortSignal,
): Promise<void> {
  const { info } = Context.current();
  const canWait = Math.max(0, (info.startToCloseTimeoutMs ?? 5 * 60_000) - 60_000);
  const fallbacks = settings?.fallbackModels ?? [];
  const at = settings?.model === undefined ? -1 : fallbacks.indexOf(settings.model);
  const hasNext = at < fallbacks.length - 1;
  const bound = hasNext && model.limit.maxWaitMs !== undefined ? Math.min(model.limit.maxWaitMs, canWait) : canWait;
  const turn = await governors.waitTurn(model, tokens, bound, signal);
  if (turn.taken) return;
  const fallingBack = hasNext && model.limit.maxWaitMs !== undefined && turn.waitMs > model.limit.maxWaitMs;
  throw ApplicationFailure.create({
    message: fallingBack
      ? `${model.name} is at its rate limit: this call's turn is ${Math.ceil(turn.waitMs / 1000)} s away, more than its maxWaitMs (${model.limit.maxWaitMs} ms); the agent's next model answers instead`
      : `${model.name} is at its rate limit: this call's turn is ${Math.ceil(turn.waitMs / 1000)} s away, more than one attempt may wait; it asks again then`,
    type: 'ModelCall.RateLimit',
    nonRetryable: fallingBack,
    ...(fallingBack ? {} : { nextRetryDelay: Math.max(1000, turn.waitMs - canWait) }),
  });
}
