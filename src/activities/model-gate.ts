import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { ChatMessage, Usage } from '../core/messages/chat-message';
import type { ModelReply } from '../core/messages/model-reply';
import type { ModelCallInput } from '../contracts/activity-interface';
import { estimateTokens } from '../core/context/compaction';
import type { ModelRoute } from '../models/chat-model';
import type { ModelPricing } from '../models/catalogue';
import { isModelCallError } from '../models/model-error';
import { traceEmbeddings, traceModelCall } from '../telemetry/gen-ai';
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
      () =>
        this.through(request, estimateOf(request, this.pricing), ask, (reply) => {
          // Who answered, and what it cost: runs count their usage per model.
          reply.model = route.name;
          const cost = this.pricing.cost(route, reply.usage);
          if (cost !== undefined) reply.usage.costUsd = cost;
          return reply.usage;
        }),
    );
  }

  /**
   * Asks an embeddings model through the gate (memory's recall by meaning): reserved, governed,
   * priced and charged as a chat call is, by its input tokens (the provider's count, else the
   * estimate).
   */
  async embed(request: GatedEmbedding, ask: () => Promise<EmbeddingReply>): Promise<number[][]> {
    const { route } = request;
    const estimated = estimateTokens(request.texts.map((content) => ({ role: 'user' as const, content })));
    const estimate = { tokens: estimated, ...priced(this.pricing, route, estimated, 0) };
    const reply = await traceEmbeddings(
      { model: route.name, baseURL: route.baseURL, provider: route.provider },
      () =>
        this.through(request, estimate, ask, (r) => {
          const tokens = r.tokens ?? estimated;
          const usage: Usage = { promptTokens: tokens, completionTokens: 0, totalTokens: tokens };
          const cost = this.pricing.cost(route, usage);
          if (cost !== undefined) usage.costUsd = cost;
          return (r.usage = usage);
        }),
      (r) => r.usage!,
    );
    return reply.embeddings;
  }

  /**
   * The gate itself: the tenant's reservation and the model's turn, then `ask`; a 429 pauses the
   * model for the fleet; what `usageOf` says the reply used is charged and settled.
   */
  private async through<R>(
    request: Pick<GatedRequest, 'route' | 'tenant' | 'settings' | 'signal'>,
    estimate: { tokens: number; usd?: number },
    ask: () => Promise<R>,
    usageOf: (reply: R) => Usage,
  ): Promise<R> {
    const governed = this.governors?.of(request.route);
    if ((request.tenant !== undefined && this.budgets) || governed) this.fleetNeeded?.();
    // Its number among the activity's model requests: each is reserved, governed and charged apart.
    const call = nextCallIndex();
    // A tenant's call asks its ledger first: refused (not retried) once the tenant's budget is spent.
    if (request.tenant !== undefined && this.budgets) await this.budgets.reserve(request.tenant, estimate, call);
    // A limited model's call waits its turn, which the whole fleet's calls of the model share.
    if (governed) await waitTurn(this.governors!, governed, estimate.tokens, request.settings, request.signal, call);
    let reply: R;
    try {
      reply = await ask();
    } catch (thrown) {
      // A 429: the model pauses for every worker's calls, for as long as the provider said.
      if (governed && isModelCallError(thrown) && thrown.type === 'ModelCall.RateLimit')
        await this.governors!.pause(governed, thrown.retryAfterMs);
      throw thrown;
    }
    const usage = usageOf(reply);
    // Charged to the tenant once (a repeat of this attempt changes nothing).
    if (request.tenant !== undefined && this.budgets) await this.budgets.settle(request.tenant, usage, call);
    if (governed) await this.governors!.settle(governed, estimate.tokens, usage.totalTokens);
    return reply;
  }
}

/** One embeddings request, as the gate needs it. */
export interface GatedEmbedding {
  /** The embeddings model. */
  route: ModelRoute;
  /** What is embedded. */
  texts: readonly string[];
  /** The tenant whose run (or tool) asked, whose budget pays. */
  tenant?: string;
  /** Aborts the wait for a turn. */
  signal: AbortSignal;
}

/** What an embeddings model answered: a vector per text, and the input tokens it counted if it said. */
export interface EmbeddingReply {
  embeddings: number[][];
  tokens?: number;
  /** Set by the gate: what the request used and cost. */
  usage?: Usage;
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
  return { tokens: promptTokens + completionTokens, ...priced(pricing, request.route, promptTokens, completionTokens) };
}

/** What that many tokens cost on the route, when the catalogue prices it. */
function priced(pricing: ModelPricing, route: ModelRoute, promptTokens: number, completionTokens: number) {
  if (!pricing.catalogue.hasPrice(route)) return {};
  const usd = pricing.cost(route, { promptTokens, completionTokens, totalTokens: promptTokens + completionTokens });
  return usd !== undefined ? { usd } : {};
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
  call: number,
): Promise<void> {
  const canWait = Math.max(0, (activityTimeoutMs() ?? 5 * 60_000) - 60_000);
  const fallbacks = settings?.fallbackModels ?? [];
  const at = settings?.model === undefined ? -1 : fallbacks.indexOf(settings.model);
  const hasNext = at < fallbacks.length - 1;
  const bound = hasNext && model.limit.maxWaitMs !== undefined ? Math.min(model.limit.maxWaitMs, canWait) : canWait;
  const turn = await governors.waitTurn(model, tokens, bound, signal, call);
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

/** The running activity's start-to-close timeout; none outside an activity (a store used by a script). */
function activityTimeoutMs(): number | undefined {
  try {
    return Context.current().info.startToCloseTimeoutMs;
  } catch {
    return undefined;
  }
}

/** The model requests each running activity made so far (its Context is the same throughout). */
const callsMade = new WeakMap<object, number>();

/**
 * The number of this model request among those of its activity, in the order they are made (the
 * same on a retried attempt, which makes them again in order); 0 outside an activity.
 */
function nextCallIndex(): number {
  let context: object;
  try {
    context = Context.current();
  } catch {
    return 0;
  }
  const made = callsMade.get(context) ?? 0;
  callsMade.set(context, made + 1);
  return made;
}
