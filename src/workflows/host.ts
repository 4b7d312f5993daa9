import { allHandlersFinished, condition, setCurrentDetails, workflowInfo } from '@temporalio/workflow';
import { EventLog, type EventLogSnapshot } from '../core/events/event-log';
import type { AgentEventBody } from '../core/events/agent-events';
import type { DeliveredEvent } from '../core/time/durable-waits';
import type { ResolvedAgent } from '../core/state/agents';
import type { RunState } from '../core/state/run-state';
import type { RunPolicies } from '../core/state/policy-types';
import type { ToolInfo } from '../core/messages/tool-info';
import type { ResolveToolsInput } from '../contracts/activity-interface';
import { resolveAgent, resolveToolsAndVersion } from './activity-proxies';
import { handleApprovals, type ApprovalRelay } from './approvals';
import { versionDetails } from './details';
import { EventInbox, handleDeliveredEvents, handleEvents } from './events';
import { SharedMessages, shareEvents } from './message-sink';
import type { RunContext, RunRef } from './run-context';
import { countRun } from './run-metrics';
import { isPatched } from './patches';
import { followSearchAttributes, SearchAttributes, type ConversationValues } from './search-attributes';
import { WorkflowStreamDoor } from './workflow-streams';

/** What a workflow run of an agent carries to the next when it continues as new: its event stream and inbox. */
export interface HostCarry {
  events?: EventLogSnapshot;
  inbox?: DeliveredEvent[];
  eventIds?: string[];
}

/** The run a host's handlers act on now (a conversation between turns has none). */
export type CurrentRun = () => { run: RunRef; turn: number } | undefined;

/**
 * What every agent workflow stands on, one-shot run or conversation alike: the event stream and
 * its handlers, the inbox of delivered events, approvals (and the relay of a called agent's),
 * the search attributes that follow the event stream, the build it is pinned to, the agent or
 * tools it resolves once, how a turn ends (its event and its metric), and what continue-as-new
 * carries. The two workflows differ only in what they add: a conversation its messages and turns.
 */
export class AgentHost {
  readonly workflowId: string;
  readonly runId: string;
  /** With Worker Versioning: the build this workflow run is pinned to. */
  readonly buildId?: string;
  readonly shared = new SharedMessages();
  readonly events: EventLog;
  readonly inbox: EventInbox;
  readonly approvals: ApprovalRelay;
  /** The event log's door for Temporal's Workflow Streams subscribers (any SDK). */
  readonly streams: WorkflowStreamDoor;
  private attributes?: SearchAttributes;

  /**
   * Registers the handlers every agent workflow has (queries and signals may arrive at once):
   * `current` is the run they act on now, `lastTurn` the turn events go to between turns. A run's
   * `firstMessage` starts its turn first, so an event delivered with the run comes after it.
   */
  constructor(
    carry: HostCarry | undefined,
    current: CurrentRun,
    { lastTurn = () => 1, firstMessage }: { lastTurn?: () => number; firstMessage?: string } = {},
  ) {
    const info = workflowInfo();
    this.workflowId = info.workflowId;
    this.runId = info.runId;
    const version = info.currentDeploymentVersion;
    if (version?.deploymentName) this.buildId = version.buildId;
    const turn = () => current()?.turn ?? lastTurn();
    this.events = new EventLog(carry?.events);
    shareEvents(this.events);
    if (firstMessage !== undefined) this.events.startTurn(1, firstMessage);
    handleEvents(this.events, turn);
    this.streams = new WorkflowStreamDoor(this.events);
    this.approvals = handleApprovals(current, this.events, lastTurn);
    // Events for wait_for_event, kept across turns and continue-as-new until a wait takes them.
    this.inbox = new EventInbox(carry?.inbox, carry?.eventIds);
    handleDeliveredEvents(this.inbox, this.events, turn);
  }

  /**
   * Learns from its worker what it keeps (the search attributes, the models' context windows),
   * once per workflow run, and has the search attributes follow the event stream.
   */
  async open(read: { run: () => RunState | undefined; conversation?: () => ConversationValues }): Promise<void> {
    this.attributes = await SearchAttributes.open();
    followSearchAttributes(this.events, this.attributes, read);
  }

  /** What the worker said of itself (its models' context windows), once {@link open}. */
  get worker(): SearchAttributes['worker'] {
    return this.attributes?.worker;
  }

  /** The state on this workflow run's build (shown in status and results). */
  onBuild<S extends { buildId?: string }>(state: S): S {
    return this.buildId ? { ...state, buildId: this.buildId } : state;
  }

  /**
   * The agent and tools, resolved once by the worker (a recorded local activity): a named agent's
   * settings, tools and version, or, without one, the tools the request names and the version of
   * `definition` with them.
   */
  async resolve(
    agent: string | undefined,
    request: ResolveToolsInput,
    definition: object,
  ): Promise<{ settings?: ResolvedAgent['settings']; tools: ToolInfo[]; version?: string }> {
    if (agent) return resolveAgent({ agent, ...request });
    return resolveToolsAndVersion(request, definition);
  }

  /**
   * {@link resolve}, begun now and awaited later: called before {@link open}, the two local
   * activities go to the worker together, so a new run's first workflow task (the one that accepts
   * a new chat's message) makes one round trip to the worker fewer. Runs recorded before the
   * `start-local-activities-at-once` patch resolve after opening: for them it gives `undefined`.
   * A failure is the caller's, where it awaits the result.
   */
  resolveAtOnce(...args: Parameters<AgentHost['resolve']>): ReturnType<AgentHost['resolve']> | undefined {
    if (!isPatched('start-local-activities-at-once')) return undefined;
    const resolving = this.resolve(...args);
    // Awaited after `open`: a failure meanwhile is not an unhandled rejection (which fails the task).
    resolving.catch(() => undefined);
    return resolving;
  }

  /**
   * The run with its worker's policies, when the worker has some (what it said of itself, recorded
   * once per workflow run): each reply's tool calls are then checked before they run.
   */
  withPolicies(
    state: RunState,
    who: { tenant?: string; user?: string; delegatedBy?: RunPolicies['delegatedBy'] },
  ): RunState {
    const policies = this.worker?.policies;
    if (!policies) return state;
    return {
      ...state,
      policies: {
        mode: policies.mode,
        ...(who.tenant !== undefined ? { tenant: who.tenant } : {}),
        ...(who.user !== undefined ? { user: who.user } : {}),
        ...(who.delegatedBy?.length ? { delegatedBy: who.delegatedBy } : {}),
      },
    };
  }

  /** The Temporal UI's current details: which agent, which definition of it and which build answer. */
  showVersion(s: { agent?: { name?: string }; agentVersion?: string; buildId?: string; tenant?: string }): void {
    setCurrentDetails(versionDetails(s));
  }

  /** What {@link runLoop} needs to run `turn` (1 for a one-shot run). */
  runContext(turn: number, extra: Pick<RunContext, 'stream'> & Partial<RunContext>): RunContext {
    return {
      workflowId: this.workflowId,
      runId: this.runId,
      shared: this.shared,
      events: this.events,
      inbox: this.inbox,
      approvals: this.approvals,
      turn,
      ...extra,
    };
  }

  /** A turn (a one-shot run's only one) ended: its last event, and the metric of how it ended. */
  endTurn(
    kind: 'run' | 'turn',
    turn: number,
    agent: string | undefined,
    end: Extract<AgentEventBody, { type: 'turn_completed' | 'turn_failed' }>,
    status: string,
  ): void {
    countRun(kind, status, agent);
    this.events.emit(turn, end);
  }

  /**
   * Waits until every handler under way is done (before continue-as-new or the end of a
   * conversation), or `unless` turns true first; Workflow Streams polls, which wait for events,
   * are let go first and refused from then on. Answers whether the handlers finished; a caller
   * that goes on after all takes polls again (`streams.attach()`).
   */
  async quiesce(unless: () => boolean = () => false): Promise<boolean> {
    this.streams.detach();
    await condition(() => allHandlersFinished() || unless());
    return allHandlersFinished();
  }

  /** What continue-as-new carries of the host: the event stream's offsets and recent events, the undelivered events. */
  carry(): HostCarry {
    const inbox = this.inbox.snapshot();
    const ids = this.inbox.ids();
    return {
      events: this.events.snapshot(),
      ...(inbox.length ? { inbox } : {}),
      ...(ids.length ? { eventIds: ids } : {}),
    };
  }
}
