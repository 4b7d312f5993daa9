import { proxySinks, workflowInfo, type Sinks } from '@temporalio/workflow';
import type { AgentEvent } from '../core/events/agent-events';
import type { ChatMessage } from '../core/messages/chat-message';
import type { EventLog } from '../core/events/event-log';

/**
 * The sink through which a workflow hands its new messages to its worker's model calls (see
 * `ConversationLoader`). A sink call is not a command: it leaves no trace in history, does not
 * run on replay, and needs no `patched`.
 */
export interface AgentSinks extends Sinks {
  agentMessages: {
    /**
     * Messages `[offset, offset + messages.length)` of the calling workflow run, as of `revision`
     * (how many times a handoff replaced the system message; absent before the first).
     */
    added(offset: number, messages: ChatMessage[], revision?: number): void;
  };
  /** Each event the workflow records, for readers in its worker's process (see `contracts/live-text.ts`). */
  agentEvents: {
    recorded(event: AgentEvent): void;
  };
}

const { agentMessages, agentEvents } = proxySinks<AgentSinks>();

/** Hands each event `log` records to readers in the worker's process (not a command: no trace in history). */
export function shareEvents(log: EventLog): void {
  log.observe((note) => {
    if (note.kind === 'event')
      agentEvents.recorded({ ...note.event, offset: note.offset, turn: note.turn } as AgentEvent);
  });
}

/**
 * Remembers how many of a run's messages its worker has been given, and gives it the rest. Called
 * before each model call, so one sink call carries everything added since the previous one.
 */
export class SharedMessages {
  private shared = 0;
  /** Whether this worker has been given `[0, shared)` (false while replaying). */
  private live = false;
  private revision = 0;

  share(messages: readonly ChatMessage[], revision = 0): void {
    if (revision !== this.revision) {
      // A handoff replaced the system message: the messages are a new version, given in full.
      this.revision = revision;
      this.live = false;
    }
    if (messages.length <= this.shared && this.live) return;
    if (workflowInfo().unsafe.isReplaying) {
      // The sink is skipped on replay; the worker that first ran these steps had them.
      this.shared = messages.length;
      return;
    }
    // After a replay (a restarted worker, an evicted workflow) this worker may have none of
    // them: give it all, rather than let the next model call query for them.
    const from = this.live ? this.shared : 0;
    if (revision) agentMessages.added(from, messages.slice(from), revision);
    else agentMessages.added(from, messages.slice(from));
    this.shared = messages.length;
    this.live = true;
  }
}
