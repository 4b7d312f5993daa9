import { Context, log } from '@temporalio/activity';
import { WithStartWorkflowOperation, type Client } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import type { RateGovernorStatus, RateLimit, TurnAnswer, TurnRequest } from '../core/fleet/rate-governor';
import { UpdateBatcher } from './update-batcher';
import { DEFAULT_429_PAUSE_MS } from '../core/fleet/rate-governor';
import {
  pauseModelSignal,
  RATE_GOVERNOR_WORKFLOW_TYPE,
  rateGovernorId,
  rateGovernorQuery,
  settleTokensSignal,
  takeTurnsUpdate,
  type RateGovernorInput,
} from '../contracts/rate-governor';
import type { ModelRoute } from '../models/chat-model';

/** How long a call waits for its model's governor to answer before it goes without a turn. */
export const GOVERNOR_WAIT_MS = 10_000;

/** A limited model: its limit, and the name the limit was given under (its governor's). */
export interface GovernedModel {
  name: string;
  limit: RateLimit;
}

/**
 * A model call's side of the models' rate governors (see `rateGovernorWorkflow`): a call of a
 * limited model asks its governor for a turn before it asks the provider (an Update-with-Start:
 * the first call starts the governor), waits it, and afterwards says what the reply really used;
 * a 429 pauses the model for every worker. A governor that does not answer (no worker runs it
 * now) does not stop the call: it goes without a turn, and the worker says so.
 */
export class RateGovernors {
  private warned = false;
  /** The 429s this worker got, by model: until when (epoch ms). Known here at once; elsewhere once the governor has it. */
  private readonly paused = new Map<string, number>();
  /** Per model: this worker's calls ask for their turns together (see `UpdateBatcher`). */
  private readonly batchers = new Map<string, UpdateBatcher<TurnRequest, TurnAnswer>>();

  constructor(
    private readonly limits: Readonly<Record<string, RateLimit>>,
    private readonly client: () => Client,
    /** Where the governors run (see contracts/fleet-queue.ts). */
    private readonly fleetTaskQueue: string,
  ) {}

  /** The limit of the model a call goes to, by the name runs use (`smart`), else the provider's (`gpt-4o`). */
  of(route: ModelRoute): GovernedModel | undefined {
    for (const name of [route.name, route.model, `${route.provider}:${route.model}`])
      if (Object.hasOwn(this.limits, name)) return { name, limit: this.limits[name] };
    return undefined;
  }

  /**
   * Takes this call's turn (its key: the activity's and its attempt's) and waits until it comes,
   * heartbeats going on, or `signal` aborts. A turn further off than `maxWaitMs` is not taken
   * (`taken: false`, and how far off it was). A governor that does not answer lets the call go.
   */
  async waitTurn(
    model: GovernedModel,
    tokens: number,
    maxWaitMs: number | undefined,
    signal: AbortSignal,
    /** The call's number within its activity (see tenant-budgets.ts's `callKey`). */
    index = 0,
  ): Promise<TurnAnswer> {
    const { info } = Context.current();
    const execution = info.workflowExecution ?? { workflowId: '', runId: '' };
    const call = `${execution.workflowId}/${execution.runId}/${info.activityId}${index ? `#${index}` : ''}/${info.attempt}`;
    // A turn voided by a 429 while its call waited for it is asked for again (a few times at most).
    for (let round = 0; ; round++) {
      const answer = await this.ask(model, `${call}/${round}`, tokens, maxWaitMs, signal);
      if (!answer || !answer.taken) return answer ?? { taken: true, waitMs: 0 };
      if (answer.waitMs === 0) return answer;
      // Until the turn's time by this machine's clock (the answer took its own time to get here).
      await abortableSleep(Math.max(0, Math.min(answer.waitMs, (answer.at ?? 0) - Date.now())), signal);
      // Waited: a 429 meanwhile voids the turn (the model is paused for everyone): one this worker
      // got is known here at once; another worker's, from the governor (a query: no history).
      if (round >= 5) return answer;
      if ((this.paused.get(model.name) ?? 0) > Date.now()) continue;
      const now = await this.status(model);
      if (now === undefined || now.epoch === answer.epoch) return answer;
    }
  }

  /** Asks the governor for a turn (undefined: it did not answer, and the call goes without one). */
  private async ask(
    model: GovernedModel,
    key: string,
    tokens: number,
    maxWaitMs: number | undefined,
    signal: AbortSignal,
  ): Promise<TurnAnswer | undefined> {
    try {
      return await this.batcher(model).ask({
        key,
        tokens,
        limit: model.limit,
        ...(maxWaitMs !== undefined ? { maxWaitMs } : {}),
      });
    } catch (err) {
      if (signal.aborted) throw err;
      this.unanswered(model, err);
      return undefined;
    }
  }

  /** The model's batcher: this worker's calls of it ask the governor together. */
  private batcher(model: GovernedModel): UpdateBatcher<TurnRequest, TurnAnswer> {
    let batcher = this.batchers.get(model.name);
    if (batcher) return batcher;
    const taskQueue = this.fleetTaskQueue;
    batcher = new UpdateBatcher((requests) => {
      const client = this.client();
      return client.withDeadline(Date.now() + GOVERNOR_WAIT_MS, () =>
        client.workflow.executeUpdateWithStart(takeTurnsUpdate, {
          args: [requests],
          updateId: `turns-${randomUUID()}`,
          startWorkflowOperation: new WithStartWorkflowOperation(RATE_GOVERNOR_WORKFLOW_TYPE, {
            workflowId: rateGovernorId(model.name),
            taskQueue,
            args: [{ model: model.name, limit: model.limit }],
            workflowIdConflictPolicy: 'USE_EXISTING',
            staticSummary: `rate governor of ${model.name}`,
          }),
        }),
      );
    });
    this.batchers.set(model.name, batcher);
    return batcher;
  }

  /** The governor's status, or undefined when it does not answer. */
  private async status(model: GovernedModel): Promise<RateGovernorStatus | undefined> {
    const client = this.client();
    return client
      .withDeadline(Date.now() + GOVERNOR_WAIT_MS, () =>
        client.workflow.getHandle(rateGovernorId(model.name)).query(rateGovernorQuery),
      )
      .catch((err: unknown) => {
        this.unanswered(model, err);
        return undefined;
      });
  }

  private unanswered(model: GovernedModel, err: unknown): void {
    if (this.warned) return;
    this.warned = true;
    log.warn(
      `the rate governor of ${model.name} (workflow ${rateGovernorId(model.name)}) did not answer; calls go without a turn until it does (no worker serves the fleet's task queue "${this.fleetTaskQueue}" now: give every worker the same AGENT_FLEET_TASK_QUEUE)`,
      { error: (err as Error).message },
    );
  }

  /** What the reply really used, against what its turn was taken for. */
  async settle(model: GovernedModel, estimated: number, actual: number): Promise<void> {
    if (!model.limit.tokensPerMinute || estimated === actual) return;
    await this.signal(model, settleTokensSignal, { estimated, actual });
  }

  /** The provider said 429: every call of the model waits until `retryAfterMs` from now (default 5 s). */
  async pause(model: GovernedModel, retryAfterMs: number | undefined): Promise<void> {
    const until = Date.now() + (retryAfterMs ?? DEFAULT_429_PAUSE_MS);
    this.paused.set(model.name, Math.max(this.paused.get(model.name) ?? 0, until));
    await this.signal(model, pauseModelSignal, { until }).catch(() => undefined);
  }

  private async signal(
    model: GovernedModel,
    signal: typeof settleTokensSignal | typeof pauseModelSignal,
    arg: { estimated: number; actual: number } | { until: number },
  ): Promise<void> {
    const options = {
      workflowId: rateGovernorId(model.name),
      taskQueue: this.fleetTaskQueue,
      args: [{ model: model.name, limit: model.limit }] as [RateGovernorInput],
    };
    const workflows = this.client().workflow;
    if (signal === pauseModelSignal)
      await workflows.signalWithStart(RATE_GOVERNOR_WORKFLOW_TYPE, {
        ...options,
        signal: pauseModelSignal,
        signalArgs: [arg as { until: number }],
      });
    else
      await workflows.signalWithStart(RATE_GOVERNOR_WORKFLOW_TYPE, {
        ...options,
        signal: settleTokensSignal,
        signalArgs: [arg as { estimated: number; actual: number }],
      });
  }
}

/** Sleeps `ms`, or rejects once `signal` aborts. */
function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
