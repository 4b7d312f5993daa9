import type { AgentEvent } from '../core/events/agent-events';
import type { AgentInput } from '../core/state/run-options';
import { isTurnEnd, streamEvents } from '../client/event-stream';
import { streamLiveEvents } from '../client/live-events';
import { ClientError } from '../client/client-error';
import { DEFAULT_OUTAGE_BUDGET_MS, isServerUnreachable } from '../client/outages';
import { runOutcome, startAgentRun, type RunOutcome } from '../client/run-agent';
import { stopWaiting, type StopReason } from './interrupt';
import { approvalHint, retryText, watchProgress } from './progress';
import { openSession, type CommandTarget, type Session } from './session';
import { hintCommand } from './command-name';
import type { ImageInput } from '../storage/images';

/** Options of {@link runFromCommandLine}: where it runs (the task queue, the settings, a worker of its own when the dev server is embedded) and what. */
export interface RunFlowOptions extends CommandTarget {
  input: AgentInput;
  /** Images sent with the message (stored in the blob store when the run starts). */
  images?: ImageInput[];
  workflowId?: string;
  /** Progress notes for people (where it runs, the run id); commands send them to stderr. */
  note: (line: string) => void;
  /**
   * What needs a person's attention while waiting: failed model-call attempts, calls awaiting
   * approval, a Temporal outage. Default: `note`. Commands send it to stderr even with `--json`.
   */
  alert?: (line: string) => void;
  /** Stop waiting after this many ms; the run goes on. */
  waitMs?: number;
  /** Receives the run's events as they happen (text as it is written, tool calls, ...). */
  onEvent?: (event: AgentEvent) => void;
  /**
   * `onEvent` gets the events exactly as the run's log records them, each offset once (`--events`,
   * a machine's reading), not with the live text merged in (a person's).
   */
  loggedEvents?: boolean;
}

/** How a command-line run ended for the command: with the run's outcome, or by no longer waiting for it. */
export type RunFlowResult = { workflowId: string; uiLink?: string } & (
  | { outcome: RunOutcome }
  | {
      /** Ctrl+C, or `--wait` ran out. The run itself goes on. */
      stoppedWaiting: StopReason;
      /** Where the run goes on and how to follow it. */
      followUp: string;
    }
);

/**
 * Runs one agent run from a command line (see {@link openSession} for where it runs). While it
 * waits it reports each failed model-call attempt and each tool call awaiting approval, with the
 * commands to decide it. Ctrl+C, or `waitMs` running out, stops the waiting, never the run.
 */
export async function runFromCommandLine(options: RunFlowOptions): Promise<RunFlowResult> {
  const session = await openSession({ ...options, needsWorker: true });
  try {
    const request = options.images?.length ? { ...options.input, images: options.images } : options.input;
    const handle = await startAgentRun(session.client, request, {
      taskQueue: options.taskQueue,
      workflowId: options.workflowId,
    });
    const workflowId = handle.workflowId;
    const alert = options.alert ?? options.note;
    const uiLink = session.uiLink(workflowId);
    // The Web UI link comes with the outcome (or the follow-up when this command stops waiting).
    options.note(`Started ${workflowId}`);
    const stopped = stopWaiting(options.waitMs);
    let stopWatching = () => undefined as void;
    const streaming = new AbortController();
    let streamed: Promise<void> = Promise.resolve();
    try {
      const result = await session.run(() =>
        session.scoped(() => {
          stopWatching = watchProgress(session.client, workflowId, 'run', {
            retry: (r) => alert(retryText(r)),
            approval: (p) => approvalHint(workflowId, p).forEach((line) => alert(line)),
            failing: (reason) => alert(`The run makes no progress: its workers fail its workflow tasks: ${reason}`),
          });
          if (options.onEvent)
            streamed = forwardEvents(session, workflowId, options.onEvent, streaming.signal, options.loggedEvents);
          const outcome = runOutcome(handle, { note: alert }).catch((err: unknown) => {
            // The outage outlasted our patience, not the run: it goes on once Temporal is back.
            if (!isServerUnreachable(err)) throw err;
            throw new ClientError(
              'unreachable',
              `Temporal has been unreachable for over ${Math.round(DEFAULT_OUTAGE_BUDGET_MS / 60_000)} min, so this command stopped waiting. ${followUp(session, workflowId, uiLink).replace(/^Stopped waiting\. /, '')}`,
              workflowId,
            );
          });
          return Promise.race([outcome, stopped.reason]);
        }),
      );
      if (typeof result !== 'string') {
        // The stream ends with the run's last event, moments after the result; don't wait long for it.
        await Promise.race([streamed, new Promise((r) => setTimeout(r, 5_000).unref())]);
        return { workflowId, uiLink, outcome: result };
      }
      return { workflowId, uiLink, stoppedWaiting: result, followUp: followUp(session, workflowId, uiLink) };
    } finally {
      streaming.abort();
      stopped.dispose();
      stopWatching();
    }
  } finally {
    await session.close();
  }
}

/** Hands the run's events to `onEvent` until its turn ends; a display, so failures only end it. */
async function forwardEvents(
  session: Session,
  workflowId: string,
  onEvent: (event: AgentEvent) => void,
  signal: AbortSignal,
  logged = false,
): Promise<void> {
  try {
    const options = { after: -1, signal, until: (e: AgentEvent) => isTurnEnd(e) };
    const events = logged
      ? streamEvents(session.client, workflowId, options)
      : streamLiveEvents(session.client, workflowId, options);
    for await (const event of events) onEvent(event);
  } catch {
    // The outcome still arrives (and is printed) without the live view.
  }
}

/** Where a run goes on after this command stops waiting, and how to follow it. */
function followUp(session: Session, workflowId: string, uiLink: string | undefined): string {
  const follow = `${hintCommand()} status ${workflowId}${uiLink ? ` or ${uiLink}` : ''}`;
  if (session.mode === 'embedded-started') {
    return (
      `Stopped waiting. This command started the dev server, which stops with it: the run ${workflowId} is saved` +
      `${session.dbFilename ? ` in ${session.dbFilename}` : ''} and goes on when the server and a worker run again (npm start). Then: ${follow}`
    );
  }
  const worker = session.localWorker ? 'e.g. npm start' : 'e.g. your worker';
  return `Stopped waiting. The run ${workflowId} goes on in Temporal (on any worker of its task queue, ${worker}). Follow it with: ${follow}`;
}
