import { defineSearchAttributeKey, SearchAttributeType, type SearchAttributeUpdatePair } from '@temporalio/common';
import { isCancellation, proxyLocalActivities, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { AgentActivities, WorkerDescription } from '../contracts/activity-interface';
import {
  AGENT_SEARCH_ATTRIBUTES,
  conversationSearchValues,
  searchAttributeChanges,
  stepStaysInWorkflowTask,
  type AgentSearchAttributeName,
  type AgentSearchValues,
  runSearchValues,
  type SearchAttributeSettings,
} from '../core/run/search-attributes';
import type { NextStep, RunState } from '../core/state/run-state';
import type { EventLog } from '../core/events/event-log';
import type { Usage } from '../core/messages/chat-message';

const { describeWorker } = proxyLocalActivities<AgentActivities>({
  startToCloseTimeout: '30s',
  retry: { maximumAttempts: 3 },
});

const KEYS = Object.fromEntries(
  Object.entries(AGENT_SEARCH_ATTRIBUTES).map(([name, type]) => [
    name,
    defineSearchAttributeKey(name, type === 'Int' ? SearchAttributeType.INT : SearchAttributeType.KEYWORD),
  ]),
) as Record<AgentSearchAttributeName, ReturnType<typeof defineSearchAttributeKey>>;

/** The `AgentTenant` key: set when a run starts, given to the child runs it starts. */
export const TENANT_KEY = defineSearchAttributeKey('AgentTenant', SearchAttributeType.KEYWORD);

/** The tenant of the workflow running this code (its `AgentTenant`), if it has one. */
export function parentTenant(): string | undefined {
  const value = workflowInfo().typedSearchAttributes.get(TENANT_KEY);
  return typeof value === 'string' ? value : undefined;
}

/**
 * Keeps a workflow's agent search attributes (AgentStatus and the others) up to date: upserts
 * what changed, only attributes the namespace has registered (upserting an unknown one would
 * fail the workflow task, and so the run). What is registered comes from the worker once per run,
 * as a recorded local activity, so replays upsert exactly what the original did.
 */
export class SearchAttributes {
  private upserted: Partial<AgentSearchValues> = {};

  private constructor(
    private readonly settings: SearchAttributeSettings | undefined,
    /** What the worker said of itself besides the attributes (its models' context windows). */
    readonly worker?: Omit<WorkerDescription, 'searchAttributes'>,
  ) {}

  /**
   * Asks the worker which attributes to keep; a worker that cannot answer costs the run its
   * attributes, never the run.
   */
  static async open(): Promise<SearchAttributes> {
    try {
      const { searchAttributes: settings, ...worker } = await describeWorker();
      return new SearchAttributes(settings.registered.length > 0 ? settings : undefined, worker);
    } catch (err) {
      if (isCancellation(err)) throw err;
      return new SearchAttributes(undefined);
    }
  }

  /** The worker's default model (for runs whose settings name none). */
  get defaultModel(): string | undefined {
    return this.settings?.defaultModel;
  }

  /**
   * Upserts the attributes that differ from what was last upserted, when the change is worth one
   * (one command, one billable action; see `searchAttributeChanges`). `step`: the step the run is
   * about to take; one the server never sees (`stepStaysInWorkflowTask`) upserts nothing.
   */
  update(values: AgentSearchValues, step?: NextStep): void {
    if (!this.settings) return;
    if (step && stepStaysInWorkflowTask(step)) return;
    const changes = searchAttributeChanges(this.upserted, values, this.settings);
    const names = Object.keys(changes) as AgentSearchAttributeName[];
    if (names.length === 0) return;
    const pairs = names.map((name) => ({ key: KEYS[name], value: changes[name] }) as SearchAttributeUpdatePair);
    upsertSearchAttributes(pairs);
    this.upserted = { ...this.upserted, ...changes };
  }
}

/** What a conversation shows between turns (see `conversationSearchValues`). */
export interface ConversationValues {
  totals: { usage: Usage; lastTurnIterations: number };
  agent?: string;
  model?: string;
  agentVersion?: string;
}

/**
 * Makes the workflow's search attributes follow its event log: the log's one observer for them
 * (see `EventLog.observe`). A run's status is upserted as each step begins, as a durable wait
 * starts and ends, as an approval is escalated, and (a one-shot run) as the run ends; a
 * conversation's between turns and at its end. `run` reads the run (a conversation: its current
 * turn's) as it is now; `conversation` is given for conversations.
 */
export function followSearchAttributes(
  events: EventLog,
  attributes: SearchAttributes,
  read: { run: () => RunState | undefined; conversation?: () => ConversationValues },
): void {
  const base = () => ({ defaultModel: attributes.defaultModel });
  events.observe((note) => {
    if (note.kind === 'conversation') {
      const c = read.conversation?.();
      if (c) attributes.update(conversationSearchValues(note.state, c.totals, { ...c, ...base() }));
      return;
    }
    const state = read.run();
    if (!state) return;
    if (note.kind === 'step') return attributes.update(runSearchValues(state, base()), note.step);
    const { event } = note;
    if (event.type === 'wait_started' || event.type === 'wait_ended' || event.type === 'approval_escalated')
      return attributes.update(runSearchValues(state, base()));
    // A one-shot run's end (a conversation's turns end in its `idle`).
    if (read.conversation) return;
    if (event.type === 'turn_completed') attributes.update(runSearchValues(state, base()));
    else if (event.type === 'turn_failed')
      attributes.update({
        ...runSearchValues(state, base()),
        AgentStatus: event.errorType === 'Cancelled' ? 'cancelled' : 'failed',
      });
  });
}
