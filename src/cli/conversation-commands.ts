import type { Readable } from 'node:stream';
import { cancelWork, decideApproval, readStatus, readTranscript } from '../client/workflow-controls';
import { deliverEvent } from '../client/deliver-event';
import {
  endConversation,
  newConversationId,
  queueMessage,
  startMessage,
  type MessageRequest,
} from '../client/conversations';
import { readImageArguments } from './image-arguments';
import { listAgents } from '../client/list-agents';
import { listAgentRuns } from '../client/list-runs';
import { chat } from './chat';
import { listText, statusText, transcriptText, turnJson, versionText } from './format-conversation';
import { outcomeText } from './format-outcome';
import { stopWaiting } from './interrupt';
import { startOnlyWarning } from './option-flags';
import type { ConversationCommand } from './parse-conversation-args';
import { retryText, watchProgress } from './progress';
import { inSession, type CommandTarget } from './session';
import { requireWorkerFor } from '../client/task-queue-workers';
import { hintCommand } from './command-name';
import { usageText } from './usage-text';
import { runBranchCommand } from './branch-commands';

/** Where output goes. */
export interface CommandIO {
  stdin: Readable;
  stdout: (text: string) => void;
  stderr: (line: string) => void;
  /** Writes without a newline (prompts). */
  write: (text: string, toStderr: boolean) => void;
}

/**
 * Runs one conversation command and returns its exit code: 0 done, 1 the turn failed, 3 `--wait`
 * ran out, 130 Ctrl+C while waiting. `status`, `history`, `approve`, `reject` and `cancel` take
 * the id of a one-shot run too. Failures people can act on throw a `ClientError`.
 */
export async function runConversationCommand(
  cmd: ConversationCommand,
  target: CommandTarget,
  io: CommandIO,
): Promise<number> {
  const { taskQueue } = target;
  // Commands that start work on the task queue need a worker there; the others act on a workflow by its id.
  const needsWorker = cmd.kind === 'chat' || cmd.kind === 'send' || cmd.kind === 'agents';
  const print = (json: unknown, text: string) => io.stdout(cmd.json ? JSON.stringify(json) : text);
  return inSession(
    { ...target, needsWorker, note: (line) => (cmd.json ? undefined : io.stderr(line)) },
    async (session) => {
      const { client } = session;
      // Commands on an existing workflow are answered by a worker on its own task queue.
      if (
        !session.localWorker &&
        (cmd.kind === 'status' ||
          cmd.kind === 'history' ||
          cmd.kind === 'fork' ||
          cmd.kind === 'branches' ||
          cmd.kind === 'approve' ||
          cmd.kind === 'reject' ||
          cmd.kind === 'end')
      ) {
        await requireWorkerFor(client, cmd.conversationId);
      }
      switch (cmd.kind) {
        case 'chat': {
          const id = cmd.conversationId ?? newConversationId();
          await chat({
            client,
            conversationId: id,
            start: { taskQueue, options: cmd.options },
            io: {
              input: io.stdin,
              out: io.stdout,
              note: cmd.json ? io.stderr : io.stdout,
              prompt: (text) => io.write(text, cmd.json),
            },
            json: cmd.json,
            uiLink: session.uiLink(id),
            scoped: session.scoped,
          });
          return 0;
        }
        case 'send': {
          const start = { taskQueue, options: cmd.options };
          // Per-message options reach an open conversation too; the others only apply when it starts.
          const turn: MessageRequest = { message: cmd.message };
          if (cmd.images) turn.images = await readImageArguments(cmd.images);
          if (cmd.options.tools) turn.tools = cmd.options.tools;
          if (cmd.options.approvalTools) turn.approvalTools = cmd.options.approvalTools;
          // What the message does while a turn runs: for this message, whether the conversation is open or new.
          if (cmd.options.busy) turn.busy = cmd.options.busy;
          const warn = (wasOpen: boolean) => {
            const warning = wasOpen ? startOnlyWarning(cmd.conversationId, cmd.options) : undefined;
            if (warning) io.stderr(warning);
          };
          if (cmd.noWait) {
            warn((await queueMessage(client, cmd.conversationId, turn, start)).wasOpen);
            print(
              { conversationId: cmd.conversationId, queued: true },
              `Queued for ${cmd.conversationId}; see it with: ${hintCommand()} status ${cmd.conversationId}`,
            );
            return 0;
          }
          const sent = await startMessage(client, cmd.conversationId, turn, start, { note: io.stderr });
          warn(sent.wasOpen);
          let stopWatching = () => undefined as void;
          const stopped = stopWaiting(cmd.waitMs);
          try {
            const result = await session.scoped(() => {
              stopWatching = watchProgress(client, cmd.conversationId, 'conversation', {
                retry: (r) => io.stderr(retryText(r)),
                failing: (reason) =>
                  io.stderr(`The conversation makes no progress: its workers fail its workflow tasks: ${reason}`),
              });
              return Promise.race([sent.result(), stopped.reason]);
            });
            if (typeof result === 'string') {
              const follow = `Stopped waiting; the turn goes on in ${cmd.conversationId}. Follow it with: ${hintCommand()} status ${cmd.conversationId}`;
              io.stderr(follow);
              if (cmd.json)
                print(
                  {
                    conversationId: cmd.conversationId,
                    status: 'running',
                    error: follow,
                    errorType: 'Client.StillRunning',
                  },
                  '',
                );
              return result === 'interrupted' ? 130 : 3;
            }
            print(turnJson(result), outcomeText(result, session.uiLink(cmd.conversationId)));
            return result.status === 'failed' ? 1 : 0;
          } finally {
            stopWatching();
            stopped.dispose();
          }
        }
        case 'fork':
        case 'branches':
          return runBranchCommand(client, cmd, taskQueue, print, session.uiLink);
        case 'history': {
          const transcript = await readTranscript(client, cmd.conversationId, cmd.branch ? { branch: cmd.branch } : {});
          // Which definition and build answered (the status knows; a run it cannot read still has its history).
          const status = await readStatus(client, cmd.conversationId).catch(() => undefined);
          const versions = {
            ...(status?.agentVersion ? { agentVersion: status.agentVersion } : {}),
            ...(status?.buildId ? { buildId: status.buildId } : {}),
          };
          const header = versionText(versions);
          print(
            { workflowId: cmd.conversationId, ...transcript, ...versions },
            `${header ? `(${header})\n` : ''}${transcriptText(transcript)}`,
          );
          return 0;
        }
        case 'status': {
          const status = await readStatus(client, cmd.conversationId);
          print(status, statusText(status, session.uiLink(cmd.conversationId)));
          return 0;
        }
        case 'approve':
        case 'reject': {
          const decision = {
            callId: cmd.callId,
            approve: cmd.kind === 'approve',
            ...(cmd.reason ? { reason: cmd.reason } : {}),
          };
          const r = await decideApproval(client, cmd.conversationId, decision);
          print(
            r,
            `${r.approved ? 'Approved' : 'Rejected'} ${r.callId}${r.stillPending ? ` (${r.stillPending} more awaiting approval)` : ''}`,
          );
          return 0;
        }
        case 'event': {
          const r = await deliverEvent(
            client,
            cmd.conversationId,
            cmd.name,
            cmd.payload,
            cmd.eventId !== undefined ? { eventId: cmd.eventId } : {},
          );
          print(
            r,
            `Delivered ${r.name} to the ${r.kind} ${r.workflowId}; a wait_for_event for it gets the payload (it is kept until one waits)${r.eventId !== undefined ? `; a repeat of event id ${r.eventId} is dropped` : ''}`,
          );
          return 0;
        }
        case 'cancel': {
          const r = await cancelWork(client, cmd.conversationId);
          if (r.kind === 'run')
            print(
              { workflowId: cmd.conversationId, cancelled: 'run' },
              `Cancelling the run ${cmd.conversationId}; it ends with status "cancelled".`,
            );
          else
            print(
              { conversationId: cmd.conversationId, cancelledTurn: r.turn },
              `Cancelled turn ${r.turn} of ${cmd.conversationId}`,
            );
          return 0;
        }
        case 'agents': {
          const agents = await listAgents(client, { taskQueue });
          const text = agents.length
            ? agents
                .map((a) =>
                  [
                    `${a.name}${a.description ? `: ${a.description}` : ''}`,
                    `  tools: ${a.tools.join(', ') || 'none'}${a.model ? `; model: ${a.model}` : ''}${a.structuredOutput ? '; structured output' : ''}`,
                  ].join('\n'),
                )
                .join('\n')
            : `The workers of task queue "${taskQueue}" have no named agents; runs use every registered tool.`;
          print(agents, text);
          return 0;
        }
        case 'list': {
          const { kind: _, json: __, ...filter } = cmd;
          const { query, runs } = await listAgentRuns(client, filter);
          print(runs, listText(runs, query));
          return 0;
        }
        case 'end': {
          const r = await endConversation(client, cmd.conversationId);
          const turns = `${r.turns} turn${r.turns === 1 ? '' : 's'}`;
          const text = r.alreadyClosed
            ? `${r.conversationId} was already closed (${r.reason === 'idle_timeout' ? 'idle timeout' : 'ended'} after ${turns})`
            : `Ended ${r.conversationId} after ${turns} (${usageText(r.usage)})`;
          print(r, text);
          return 0;
        }
      }
    },
  );
}
