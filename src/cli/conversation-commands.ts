import type { Readable } from 'node:stream';
import {
  cancelTurn,
  conversationStatus,
  decideApproval,
  endConversation,
  newConversationId,
  queueMessage,
  readTranscript,
  sendMessage,
} from '../runtime/conversations';
import { chat } from './chat';
import { statusText, transcriptText, turnJson } from './format-conversation';
import { outcomeText } from './format-outcome';
import type { ConversationCommand } from './parse-conversation-args';
import { openSession } from './session';

/** Where output goes. */
export interface CommandIO {
  stdin: Readable;
  stdout: (text: string) => void;
  stderr: (line: string) => void;
  /** Writes without a newline (prompts). */
  write: (text: string, toStderr: boolean) => void;
}

/**
 * Runs one conversation command and returns its exit code: 0 done, 1 the turn failed. Rejections
 * (a wrong call id, nothing to cancel) and unknown conversations throw `ConversationError`.
 */
export async function runConversationCommand(cmd: ConversationCommand, taskQueue: string, io: CommandIO): Promise<number> {
  const session = await openSession({ taskQueue, note: (line) => (cmd.json ? undefined : io.stderr(line)) });
  const print = (json: unknown, text: string) => io.stdout(cmd.json ? JSON.stringify(json) : text);
  try {
    return await session.run(async () => {
      const { client } = session;
      switch (cmd.kind) {
        case 'chat': {
          const id = cmd.conversationId ?? newConversationId();
          await chat(
            client,
            id,
            { taskQueue, options: cmd.options },
            {
              input: io.stdin,
              out: io.stdout,
              note: cmd.json ? io.stderr : io.stdout,
              prompt: (text) => io.write(text, cmd.json),
            },
            cmd.json,
            session.uiLink(id),
          );
          return 0;
        }
        case 'send': {
          const start = { taskQueue, options: cmd.options };
          if (cmd.noWait) {
            await queueMessage(client, cmd.conversationId, { message: cmd.message }, start);
            print({ conversationId: cmd.conversationId, queued: true }, `Queued for ${cmd.conversationId}; see it with: client.ts status ${cmd.conversationId}`);
            return 0;
          }
          const result = await sendMessage(client, cmd.conversationId, { message: cmd.message }, start);
          print(turnJson(result), outcomeText(result, session.uiLink(cmd.conversationId)));
          return result.status === 'failed' ? 1 : 0;
        }
        case 'history': {
          const transcript = await readTranscript(client, cmd.conversationId);
          print({ conversationId: cmd.conversationId, ...transcript }, transcriptText(transcript));
          return 0;
        }
        case 'status': {
          const status = await conversationStatus(client, cmd.conversationId);
          print(status, statusText(status, session.uiLink(cmd.conversationId)));
          return 0;
        }
        case 'approve':
        case 'reject': {
          const decision = { callId: cmd.callId, approve: cmd.kind === 'approve', ...(cmd.reason ? { reason: cmd.reason } : {}) };
          const r = await decideApproval(client, cmd.conversationId, decision);
          print(r, `${r.approved ? 'Approved' : 'Rejected'} ${r.callId}${r.stillPending ? ` (${r.stillPending} more awaiting approval)` : ''}`);
          return 0;
        }
        case 'cancel': {
          const r = await cancelTurn(client, cmd.conversationId);
          print({ conversationId: cmd.conversationId, cancelledTurn: r.turn }, `Cancelled turn ${r.turn} of ${cmd.conversationId}`);
          return 0;
        }
        case 'end': {
          const r = await endConversation(client, cmd.conversationId);
          print(r, `Ended ${r.conversationId} after ${r.turns} turn${r.turns === 1 ? '' : 's'} (${r.usage.totalTokens} tokens)`);
          return 0;
        }
      }
    });
  } finally {
    await session.close();
  }
}
