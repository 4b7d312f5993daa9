import type { ChatMessage } from '../messages/chat-message';
import { workspaceAt } from '../workspace/workspace-options';
import type { BranchInfo, BranchOrigin, BranchSnapshot, ConversationState, ForkPoint } from './conversation-state';

/**
 * A conversation's branches, as pure functions. A regenerated answer or an edited earlier message
 * forks the conversation at that user message: the new turn sees the transcript before it, and the
 * branch it replaced stays readable and can be made current again, as in every chat product. The
 * branches share the messages before the fork (so a provider's prompt cache still hits on them).
 *
 * Where branches live: the current branch is the conversation state as always. A branch it
 * replaced is kept whole in the workflow run that replaced it (`ConversationState.branches`), from
 * the run's first held message on: everything before that is the same on every branch, because a
 * fork can only start at a message the run holds. Continue-as-new carries only an index of them
 * (`olderBranches`), so a run's history stays bounded however many branches there were; a branch
 * of an earlier run is read from that run (its `heldBy`), which answers by replay.
 */

/** The branch a conversation starts on. */
export const MAIN_BRANCH = 'main';

/** How many branches a conversation may have, the main one included. */
export const MAX_BRANCHES = 100;

/** What is wrong with a message's `fork` (its shape; whether the point exists is the workflow's to say), or undefined. */
export function forkPointProblem(fork: unknown, busy: unknown): string | undefined {
  if (fork === undefined) return undefined;
  const f = fork as Record<string, unknown> | null;
  const ok =
    f !== null &&
    typeof f === 'object' &&
    Object.keys(f).length === 1 &&
    ((Number.isInteger(f.atMessage) && (f.atMessage as number) >= 0) ||
      (typeof f.atMessageId === 'string' && f.atMessageId !== ''));
  if (!ok)
    return '"fork" must be {"atMessage": <the transcript index of a user message>} or {"atMessageId": "<that message\'s id>"}';
  if (busy === 'steer') return 'a fork starts a turn of its own: it cannot steer the running one (busy "steer")';
  return undefined;
}

/** The id of the branch new messages go to. */
export function currentBranch(conv: Pick<ConversationState, 'branch'>): string {
  return conv.branch?.id ?? MAIN_BRANCH;
}

/** The user message a fork point names, as an index into `messages` (the run's held messages), or why not. */
export function forkIndex(
  conv: Pick<ConversationState, 'messages' | 'transcriptStart' | 'context' | 'branches' | 'olderBranches'>,
  point: ForkPoint,
  conversationId: string,
): { index: number } | { problem: string } {
  const { messages, transcriptStart } = conv;
  let index: number | undefined;
  if ('atMessage' in point) index = point.atMessage - transcriptStart;
  else {
    const byPosition = point.atMessageId.match(/^(.*)-user-(\d+)$/);
    if (byPosition && byPosition[1] === conversationId) index = Number(byPosition[2]) - transcriptStart;
    else {
      const id = point.atMessageId;
      for (let i = messages.length - 1; i >= 0 && index === undefined; i--) {
        const m = messages[i];
        if (m.role === 'user' && m.messageId !== undefined && (m.messageId === id || m.messageId.startsWith(`${id}~`)))
          index = i;
      }
      if (index === undefined)
        return {
          problem: `no message "${id}" on the current branch the conversation still holds: name the message to fork at by its transcript index ("atMessage")`,
        };
    }
  }
  const at = index + transcriptStart;
  if (index < 0)
    return {
      problem: `message ${at} is older than what the conversation holds word for word (from message ${transcriptStart} on, after it continued as new): fork at a later message`,
    };
  if (index >= messages.length || !Number.isInteger(index))
    return {
      problem: `there is no message ${at}: the current branch has ${transcriptStart + messages.length} messages`,
    };
  const m = messages[index];
  if (m.role !== 'user' || m.steered)
    return {
      problem: `message ${at} is not a message a person sent (it is the ${m.role === 'user' ? 'steering message of a turn' : m.role}'s): fork at a user message, which the new message replaces`,
    };
  // Memory by tokens summarised what came before `context.from`: a branch before it would start from a summary of its future.
  if (conv.context && index < conv.context.from)
    return {
      problem: `message ${at} has been summarised (the model reads the conversation word for word from message ${transcriptStart + conv.context.from} on): fork at a later message`,
    };
  if (branchCount(conv) >= MAX_BRANCHES)
    return {
      problem: `the conversation has ${MAX_BRANCHES} branches, as many as it may have: fork a new conversation`,
    };
  return { index };
}

function branchCount(conv: Pick<ConversationState, 'branches' | 'olderBranches'>): number {
  return 1 + (conv.branches?.length ?? 0) + (conv.olderBranches?.length ?? 0);
}

/**
 * The conversation forked before its held message `index` (see {@link forkIndex}): the current
 * branch is kept as it is, and a new current branch holds the messages before it.
 */
export function forkAt(conv: ConversationState, index: number): ConversationState {
  const id = `b${(conv.branchesMade ?? 0) + 1}`;
  const next: ConversationState = {
    ...conv,
    branches: [...(conv.branches ?? []), snapshotOf(conv)],
    branchesMade: (conv.branchesMade ?? 0) + 1,
    branch: { id, parent: currentBranch(conv), forkedAt: conv.transcriptStart + index },
    messages: conv.messages.slice(0, index),
    ...newVersion(conv),
  };
  // The workspace as it was when the message forked at was sent (it notes that), else as the
  // messages kept last committed it.
  const at = conv.messages[index];
  const workspace = at?.role === 'user' && at.workspace !== undefined ? at.workspace : workspaceAt(next.messages);
  if (workspace) next.workspace = workspace;
  else delete next.workspace;
  // Memory by tokens: the summary (of messages before `context.from`, which forkIndex keeps the fork
  // after) was appended when it was written; when that was after the fork, it moves to the cut.
  if (conv.context && conv.context.summary >= index) {
    next.messages.push(conv.messages[conv.context.summary]);
    next.context = { from: conv.context.from, summary: index };
  }
  return next;
}

/** What is wrong with making `id` the current branch, or undefined. */
export function switchProblem(conv: ConversationState, id: unknown): string | undefined {
  if (typeof id !== 'string' || id === '') return '"branch" must be the id of one of the conversation\'s branches';
  if (id === currentBranch(conv)) return undefined;
  if (conv.branches?.some((b) => b.id === id)) return undefined;
  const older = conv.olderBranches?.find((b) => b.id === id);
  if (older)
    return `branch "${id}" was kept by an earlier run of this conversation (before it continued as new): read it, or fork a new conversation from it`;
  return `no branch "${id}"; the conversation's branches: ${listBranches(conv)
    .map((b) => b.id)
    .join(', ')}`;
}

/** The conversation with the branch `id` current again, and the branch that was current kept (see {@link switchProblem}). */
export function switchBranch(conv: ConversationState, id: string): ConversationState {
  if (id === currentBranch(conv)) return conv;
  const target = conv.branches!.find((b) => b.id === id)!;
  const { parent, forkedAt, messages, context, lastPrompt, options, tools } = target;
  const next: ConversationState = {
    ...conv,
    branches: [...conv.branches!.filter((b) => b !== target), snapshotOf(conv)],
    branch: { id, ...(parent !== undefined ? { parent } : {}), ...(forkedAt !== undefined ? { forkedAt } : {}) },
    messages,
    options,
    tools,
    ...newVersion(conv),
  };
  for (const [key, value] of [
    ['context', context],
    ['lastPrompt', lastPrompt],
    ['workspace', target.workspace],
  ] as const)
    if (value === undefined) delete next[key];
    else (next as unknown as Record<string, unknown>)[key] = value;
  return next;
}

/** The held messages of a branch this run keeps (the current one too), or undefined. */
export function branchMessages(conv: ConversationState, id: string | undefined): ChatMessage[] | undefined {
  if (id === undefined || id === currentBranch(conv)) return conv.messages;
  return conv.branches?.find((b) => b.id === id)?.messages;
}

/** The conversation's branches: the current one first, then those this run keeps, then those earlier runs keep. */
export function listBranches(conv: ConversationState, held: ChatMessage[] = conv.messages): BranchInfo[] {
  const info = (b: BranchOrigin, messages: ChatMessage[], current: boolean): BranchInfo => {
    const first = b.forkedAt === undefined ? undefined : messages[b.forkedAt - conv.transcriptStart];
    return {
      ...b,
      messageCount: conv.transcriptStart + messages.length,
      current,
      ...(first?.role === 'user' ? { label: label(first.content) } : {}),
    };
  };
  const others = [
    ...(conv.branches ?? []).map((b) => {
      const { messages, context: _c, lastPrompt: _l, options: _o, tools: _t, ...origin } = b;
      return info(origin, messages, false);
    }),
    ...(conv.olderBranches ?? []),
  ];
  // The others in the order they were made: `main`, then `b1`, `b2`, ...
  const order = (b: BranchInfo) => (b.id === MAIN_BRANCH ? 0 : Number(b.id.slice(1)));
  return [info(conv.branch ?? { id: MAIN_BRANCH }, held, true), ...others.sort((a, b) => order(a) - order(b))];
}

/** What continue-as-new carries of the branches this run keeps: where each is read, not its messages. */
export function carriedBranches(conv: ConversationState, runId: string): BranchInfo[] | undefined {
  const older = listBranches(conv)
    .slice(1)
    .map((b) => (b.heldBy ? b : { ...b, heldBy: runId }));
  return older.length > 0 ? older : undefined;
}

/**
 * A new version of the messages for the worker's message cache (`revision`, which a handoff also
 * moves on): the cache only ever adds messages to a version, and a fork or a switch changes
 * earlier ones. Never one used before in this run, whichever branch used it.
 */
function newVersion(conv: ConversationState): { revision: number; revisionsMade: number } {
  const revision = Math.max(conv.revision ?? 0, conv.revisionsMade ?? 0) + 1;
  return { revision, revisionsMade: revision };
}

function snapshotOf(conv: ConversationState): BranchSnapshot {
  return {
    ...(conv.branch ?? { id: MAIN_BRANCH }),
    messages: conv.messages,
    options: conv.options,
    ...(conv.tools ? { tools: conv.tools } : {}),
    ...(conv.context ? { context: conv.context } : {}),
    ...(conv.lastPrompt ? { lastPrompt: conv.lastPrompt } : {}),
    ...(conv.workspace ? { workspace: conv.workspace } : {}),
  };
}

function label(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}
