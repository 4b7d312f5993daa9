import {
  ApplicationFailure,
  condition,
  defineQuery,
  defineSignal,
  defineUpdate,
  setHandler,
} from '@temporalio/workflow';
import { HandlerUnfinishedPolicy } from '@temporalio/common';
import { getActivator } from '@temporalio/workflow/lib/global-attributes';
import type { EventLog } from '../core/events/event-log';
import {
  STREAM_OFFSET_QUERY,
  STREAM_POLL_UPDATE,
  STREAM_PUBLISH_SIGNAL,
  streamPollProblem,
  streamPollReady,
  streamPollResult,
  truncatedPoll,
  type StreamPollInput,
  type StreamPollResult,
} from '../core/events/workflow-stream-wire';

const pollUpdate = defineUpdate<StreamPollResult, [StreamPollInput]>(STREAM_POLL_UPDATE);
const offsetQuery = defineQuery<number>(STREAM_OFFSET_QUERY);
// The same name as the Update: subscribers read a closed run's remaining events with it.
const pollQuery = defineQuery<StreamPollResult, [StreamPollInput]>(STREAM_POLL_UPDATE);
const publishSignal = defineSignal<[unknown]>(STREAM_PUBLISH_SIGNAL);

/**
 * The workflow's door for Temporal's Workflow Streams subscribers (see
 * `core/events/workflow-stream-wire.ts`): the poll Update long-polls the event log, the poll
 * Query reads it at once (a closed run's), the offset Query answers its next offset. A poll
 * waits in the workflow, so before anything that waits for every handler to finish
 * (continue-as-new, the end of a conversation) the door is
 * {@link WorkflowStreamDoor.detach}ed: waiting polls answer with what there is, new ones are
 * refused as `StreamDraining` (the subscribers' cue to poll again, the new run then).
 */
export class WorkflowStreamDoor {
  private draining = false;

  constructor(private readonly events: EventLog) {
    setHandler(pollUpdate, (input) => this.poll(input), {
      validator: (input) => {
        const problem = streamPollProblem(input);
        if (problem) throw ApplicationFailure.create({ message: problem, type: 'InvalidPoll', nonRetryable: true });
        if (this.draining)
          throw ApplicationFailure.create({
            message: 'the workflow is about to continue as new or end: poll again',
            type: 'StreamDraining',
            nonRetryable: true,
          });
      },
      // A poll still waiting when the run ends is the subscriber's cue to look at how it ended.
      unfinishedPolicy: HandlerUnfinishedPolicy.ABANDON,
    });
    setHandler(offsetQuery, () => events.nextOffset);
    setPollQuery((input) => {
      const problem = streamPollProblem(input);
      if (problem) throw new Error(problem);
      return this.read(input);
    });
    // A signal cannot be refused: the log is the agent's own record, so published items are dropped.
    setHandler(publishSignal, () => {
      console.warn('items published to an agent workflow stream are dropped: its events come from the agent alone');
    });
  }

  /** Waiting polls answer now and new ones are refused until {@link attach} (or for good). */
  detach(): void {
    this.draining = true;
  }

  /** Polls are taken again (the workflow did not continue as new after all). */
  attach(): void {
    this.draining = false;
  }

  private async poll(input: StreamPollInput): Promise<StreamPollResult> {
    const from = input.from_offset;
    await condition(() => this.draining || streamPollReady(from, this.events.firstKept, this.events.nextOffset));
    const truncated = truncatedPoll(from, this.events.firstKept);
    if (truncated) throw ApplicationFailure.create({ ...truncated, nonRetryable: true });
    return this.read(input);
  }

  /** What the log has from the poll's offset on (from the oldest kept when that is gone), now. */
  private read(input: StreamPollInput): StreamPollResult {
    const from = input.from_offset;
    return streamPollResult(this.events.read({ after: from - 1 }), input.topics ?? [], from);
  }
}

/**
 * Registers the poll Query. Why not `setHandler` alone: the SDK's list of the contrib packages'
 * reserved names (`@temporalio/common`'s `reserved`) takes `__temporal_workflow_stream_poll` as an
 * Update only, while the protocol's subscribers (Python's since 1.35) read a closed run's events
 * with a Query of that name; the SDK refuses it at registration, never at a query. Where the SDK
 * takes it, `setHandler` does; else it goes in the handlers' map as `setHandler` would put it;
 * without either, closed runs answer polls with the Update alone.
 */
function setPollQuery(handler: (input: StreamPollInput) => StreamPollResult): void {
  try {
    setHandler(pollQuery, handler);
    return;
  } catch (err) {
    if (!(err instanceof TypeError)) throw err;
  }
  const handlers = (getActivator() as unknown as { queryHandlers?: unknown }).queryHandlers;
  if (handlers instanceof Map) handlers.set(STREAM_POLL_UPDATE, { handler, description: 'Workflow Streams poll' });
}
