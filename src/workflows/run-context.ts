import type { EventLog } from '../core/events/event-log';
import type { MemoryForgotten } from '../core/conversation/forgetting';
import type { MemoryPlan } from '../core/facts/memory-options';
import type { RunState } from '../core/state/run-state';
import type { TurnInput } from '../core/conversation/conversation-state';
import type { SharedMessages } from './message-sink';
import type { EventInbox } from './events';
import type { TimeLimit } from './time-limit';
import type { ChildApprovals } from '../contracts/definitions';

/** The run being driven; the loop replaces `state` after every step, handlers and queries read it. */
export interface RunRef {
  state: RunState;
  /**
   * Facts deleted from memory while the run went on (the `memoryForgotten` signal): taken out of
   * each state a step returns too, since a step that was under way began before the deletion.
   */
  forgotten?: MemoryForgotten;
}

/**
 * What a run tells its caller about approvals when it is an agent called as a tool (the
 * ApprovalRelay of approvals.ts): what is pending now, with what was decided or escalated since.
 */
export interface ApprovalNotifier {
  notifyParent(changes?: Pick<ChildApprovals, 'decided' | 'escalated'>): void;
}

/** What {@link runLoop} needs besides the run (whose state holds the agent it speaks as): where it runs and where events go. */
export interface RunContext {
  workflowId: string;
  runId: string;
  shared: SharedMessages;
  /** The workflow's event stream, and the turn this run is (1 for a one-shot run). */
  events: EventLog;
  turn: number;
  /** The tenant the run works for (its `tenant`): its model calls and tools are told, for budgets, limits and credentials. */
  tenant?: string;
  /** The user the run works for (its `user`): the memory tools' scope, and automatic memory's. */
  user?: string;
  /** The run's memory across conversations (its agent's `memory`), when it has a user to keep it for. */
  memory?: { plan: MemoryPlan; agent?: string };
  /** The run's priority key (its own or its agent's): its model calls and tools are dispatched by it. */
  priority?: number;
  /** Whether model calls stream their text as they write it (the run's `stream` option). */
  stream: boolean;
  /** A conversation (its agents called as tools get the turn in their workflow ids). */
  conversation?: boolean;
  /** The events delivered to the workflow, for `wait_for_event`. */
  inbox?: EventInbox;
  /** The run's `maxExecutionTime`, which durable waits pause. */
  timeLimit?: TimeLimit;
  /** Tells the caller of an agent called as a tool what it waits on. */
  approvals?: ApprovalNotifier;
  /** A conversation's messages sent with `busy: "steer"` since the last call: they join the run before its next model call. */
  steering?: () => TurnInput[];
  /** A model call was stopped (its scope cancelled) after writing `text`. */
  stopped?: (text: string) => void;
  /** Called before each step with the run's state: a one-shot run continues as new there (the promise never resolves). */
  beforeStep?: (state: RunState) => Promise<never> | undefined;
}
