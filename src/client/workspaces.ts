import type { Client } from '@temporalio/client';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow';
import { structuredPatch } from 'diff';
import {
  contentRef,
  keptPathProblem,
  workspaceChanges,
  normalizeWorkspacePath,
  type WorkspaceChanges,
} from '../core/workspace/manifest';
import type { WorkspaceManifest } from '../core/workspace/manifest';
import { workspaceAt } from '../core/workspace/workspace-options';
import type { BlobStore } from '../storage/blob-store';
import { copyState, EMPTY_MANIFEST, loadManifest } from '../workspace/workspace-snapshots';
import { stateStore, workspaceScope } from '../workspace/workspace-store';
import { ClientError } from './client-error';
import { clientBlobStore } from './stored-images';
import { CONVERSATION_WORKFLOW_TYPE, conversationStatusQuery } from '../contracts/definitions';
import type { ConversationResult } from '../core/conversation/conversation-status';
import type { temporal } from '@temporalio/proto';
import { continuedAs, continuedFrom, orderedToolOutcomes } from './tool-results';

/**
 * A run's or conversation's workspace as people see it: the states its tool calls committed, read
 * from its histories (every run it continued through; no worker needed, closed or open), and the
 * files of a state, read from the blob store the worker saved them in.
 */

/** One state a tool call committed. */
export interface WorkspaceCommit extends WorkspaceChanges {
  /** The model call (1-based, counted over the whole run) whose tool call committed it. */
  step: number;
  callId: string;
  /** The state's reference (its manifest in the blob store). */
  ref: string;
}

/** The states of a run's workspace, first to last. */
export interface WorkspaceStates {
  /** The state it started from (a fork's, a rerun's, a continued run's); undefined: empty. */
  initial?: string;
  commits: WorkspaceCommit[];
  /**
   * A conversation's current branch, when it could be read (a closed one's result, an open one's
   * status): the state that branch works on (`ref` absent: empty). A conversation edited or
   * switched back to an earlier branch works on that branch's state, not on the last commit.
   */
  current?: { ref?: string };
}

/** Reads the states a run's (or conversation's) tool calls committed, over all its runs. */
export async function workspaceStates(client: Client, workflowId: string): Promise<WorkspaceStates> {
  const converter = client.options.loadedDataConverter;
  const fetch = (runId?: string) => client.workflow.getHandle(workflowId, runId).fetchHistory();
  let history = await fetch().catch((e: Error) => {
    if (/not found/i.test(e.message)) throw new ClientError('not_found', `no run or conversation "${workflowId}"`);
    throw e;
  });
  // From the first run on: the latest run's history names the one before it.
  for (let previous = continuedFrom(history); previous; previous = continuedFrom(history))
    history = await fetch(previous);
  const initial = await startingState(history, converter);
  const commits: WorkspaceCommit[] = [];
  let before = 0;
  for (;;) {
    for (const { callId, outcome, modelCalls } of await orderedToolOutcomes(history, converter)) {
      if (outcome.workspace) commits.push({ step: before + modelCalls, callId, ...outcome.workspace });
    }
    before += modelCallsIn(history);
    const next = continuedAs(history);
    if (!next) break;
    history = await fetch(next);
  }
  const current = isConversation(history) ? await currentBranchState(client, workflowId, history) : undefined;
  return { ...(initial ? { initial } : {}), commits, ...(current ? { current } : {}) };
}

type History = temporal.api.history.v1.IHistory;

function isConversation(history: History): boolean {
  return (
    history.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name === CONVERSATION_WORKFLOW_TYPE
  );
}

/**
 * The state a conversation's current branch works on: a closed one's result says it; an open one's
 * status (a query, which needs a worker). Undefined when neither answers (a result from before
 * this was recorded, no worker): the last commit stands for it then.
 */
async function currentBranchState(
  client: Client,
  workflowId: string,
  latest: History,
): Promise<{ ref?: string } | undefined> {
  const last = latest.events?.[latest.events.length - 1];
  const done = last?.workflowExecutionCompletedEventAttributes?.result?.payloads;
  if (done?.length) {
    const result = await decodeFromPayloadsAtIndex<ConversationResult>(
      client.options.loadedDataConverter,
      0,
      done,
    ).catch(() => undefined);
    return result?.workspace !== undefined ? (result.workspace ? { ref: result.workspace } : {}) : undefined;
  }
  // Closed otherwise (failed, cancelled, terminated, timed out): no result to read, no worker to ask.
  if (
    last?.workflowExecutionFailedEventAttributes ||
    last?.workflowExecutionCanceledEventAttributes ||
    last?.workflowExecutionTerminatedEventAttributes ||
    last?.workflowExecutionTimedOutEventAttributes
  )
    return undefined;
  const status = await client.workflow
    .getHandle(workflowId)
    .query(conversationStatusQuery)
    .catch(() => undefined);
  return status ? (status.workspace ? { ref: status.workspace } : {}) : undefined;
}

/**
 * The state before model call `step` (as `rerun --from-step` starts from it), or after the last
 * commit when no step is given. Undefined: the workspace was empty then.
 */
export function stateAtStep(states: WorkspaceStates, step?: number): string | undefined {
  if (step === undefined && states.current) return states.current.ref;
  const before = step === undefined ? states.commits : states.commits.filter((c) => c.step < step);
  return before.length ? before[before.length - 1].ref : states.initial;
}

/** The files of a state (undefined: the empty workspace). */
export async function workspaceManifestOf(blobs: BlobStore, ref: string | undefined): Promise<WorkspaceManifest> {
  if (!ref) return EMPTY_MANIFEST;
  const { store, manifest } = stateStore(blobs, ref);
  return loadManifest(manifest, store);
}

/** The bytes of a file (not a link) of the state `ref`, from the scope that state is in. */
function contentOf(blobs: BlobStore, ref: string | undefined, file: WorkspaceManifest['files'][number]) {
  return (ref ? stateStore(blobs, ref).store : blobs).get(contentRef(file));
}

/** A file of a state: its bytes; `not_found` when the state has no such file. */
export async function workspaceFile(blobs: BlobStore, ref: string | undefined, path: string): Promise<Uint8Array> {
  const normal = asKept(path);
  const file = normal ? (await workspaceManifestOf(blobs, ref)).files.find((f) => f.path === normal) : undefined;
  if (!file) throw new ClientError('not_found', `the workspace has no file "${path}" (ls lists its files)`);
  if (file.link !== undefined) return Buffer.from(file.link);
  return contentOf(blobs, ref, file);
}

/**
 * A path as a person names a file of a state: as the state keeps it (a command may have made a
 * name with a `\\` in it), else as a tool would (`/workspace/a` → `a`).
 */
function asKept(path: string): string | undefined {
  return keptPathProblem(path) === undefined ? path : normalizeWorkspacePath(path);
}

/** The files of a directory of a state (`""`: all), each with its size. */
export async function listWorkspace(
  blobs: BlobStore,
  ref: string | undefined,
  dir = '',
): Promise<WorkspaceManifest['files']> {
  const normal = dir === '' ? '' : asKept(dir);
  if (normal === undefined) throw new ClientError('invalid', `"${dir}" is not a path inside the workspace`);
  const files = (await workspaceManifestOf(blobs, ref)).files;
  return normal === '' ? files : files.filter((f) => f.path === normal || f.path.startsWith(`${normal}/`));
}

/** What changed between two states, with a unified diff of each text file that changed. */
export async function diffWorkspace(
  blobs: BlobStore,
  from: string | undefined,
  to: string | undefined,
): Promise<{ changes: WorkspaceChanges; patch: string }> {
  const [a, b] = await Promise.all([workspaceManifestOf(blobs, from), workspaceManifestOf(blobs, to)]);
  const changes = workspaceChanges(a, b);
  const text = async (m: WorkspaceManifest, ref: string | undefined, path: string) => {
    const f = m.files.find((x) => x.path === path);
    if (!f) return '';
    const bytes = f.link !== undefined ? Buffer.from(f.link) : Buffer.from(await contentOf(blobs, ref, f));
    return bytes.includes(0) ? undefined : bytes.toString('utf8');
  };
  const parts: string[] = [];
  for (const path of [...changes.added, ...changes.changed, ...changes.removed].sort()) {
    const [before, after] = await Promise.all([text(a, from, path), text(b, to, path)]);
    if (before === undefined || after === undefined) {
      parts.push(`Binary file ${path} differs\n`);
      continue;
    }
    const p = structuredPatch(`a/${path}`, `b/${path}`, before, after, '', '', { context: 3 });
    const hunks = p.hunks.map(
      (h) => `@@ -${h.oldStart},${h.oldLines} +${h.newStart},${h.newLines} @@\n${h.lines.join('\n')}\n`,
    );
    parts.push(
      `--- ${changes.added.includes(path) ? '/dev/null' : `a/${path}`}\n+++ ${changes.removed.includes(path) ? '/dev/null' : `b/${path}`}\n${hunks.join('')}`,
    );
  }
  return { changes, patch: parts.join('') };
}

/**
 * A fork's or rerun's starting state (`ref`, its source's) copied into the new workflow's own
 * scope before it starts, so its source can be deleted at once without taking it. Best effort:
 * where this client's blob store is not its workers' (the copy fails), the ref is given as it is,
 * and the new workflow's first call in the workspace copies it then.
 */
export async function adoptStartingState(
  client: Client,
  ref: string | undefined,
  workflowId: string,
  blobs: BlobStore = workspaceBlobs(client),
): Promise<string | undefined> {
  if (!ref) return ref;
  return copyState(blobs, ref, workspaceScope(client.options.namespace, workflowId)).catch(() => ref);
}

/** The blob store a client reads workspaces from: the one it writes images to (see `clientBlobStore`). */
export function workspaceBlobs(client: Client): BlobStore {
  return clientBlobStore(client);
}

/** How many model calls a history scheduled. */
function modelCallsIn(
  history: Awaited<ReturnType<ReturnType<Client['workflow']['getHandle']>['fetchHistory']>>,
): number {
  return (history.events ?? []).filter(
    (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'callModel',
  ).length;
}

/** The state a first run started from: a fork's or a continued conversation's carry, a continued run's state, a rerun's messages. */
async function startingState(
  history: Awaited<ReturnType<ReturnType<Client['workflow']['getHandle']>['fetchHistory']>>,
  converter: Client['options']['loadedDataConverter'],
): Promise<string | undefined> {
  const payloads = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads;
  if (!payloads?.length) return undefined;
  let input: {
    carry?: { workspace?: string; state?: { workspace?: { ref?: string } } };
    rerun?: { messages: Parameters<typeof workspaceAt>[0] };
  };
  try {
    input = await decodeFromPayloadsAtIndex(converter, 0, payloads);
  } catch {
    return undefined;
  }
  return (
    input?.carry?.workspace ??
    input?.carry?.state?.workspace?.ref ??
    (input?.rerun ? workspaceAt(input.rerun.messages) : undefined)
  );
}

/**
 * A state as a tar archive (POSIX ustar, with PAX records for long names), to take the work
 * elsewhere: `durable-agents workspace <id> export --out work.tar`. Hand-written: a tar of regular
 * files and links is a header per file, where a package would bring a streaming engine for it.
 */
export async function workspaceTar(blobs: BlobStore, ref: string | undefined): Promise<Buffer> {
  const parts: Buffer[] = [];
  const mtime = Math.floor(Date.now() / 1000);
  for (const f of (await workspaceManifestOf(blobs, ref)).files) {
    const body = f.link !== undefined ? Buffer.alloc(0) : Buffer.from(await contentOf(blobs, ref, f));
    const long = Buffer.byteLength(f.path) > 100 || (f.link !== undefined && Buffer.byteLength(f.link) > 100);
    if (long) {
      const records = paxRecord('path', f.path) + (f.link !== undefined ? paxRecord('linkpath', f.link) : '');
      const pax = Buffer.from(records);
      parts.push(tarHeader('PaxHeader', pax.length, 'x', '', 0o644, mtime), padded(pax));
    }
    const name = long ? f.path.slice(-100) : f.path;
    const type = f.link !== undefined ? '2' : '0';
    const mode = f.link !== undefined ? 0o777 : f.executable ? 0o755 : 0o644;
    parts.push(tarHeader(name, body.length, type, (f.link ?? '').slice(0, 100), mode, mtime), padded(body));
  }
  parts.push(Buffer.alloc(1024));
  return Buffer.concat(parts);
}

function paxRecord(key: string, value: string): string {
  const text = ` ${key}=${value}\n`;
  let length = Buffer.byteLength(text) + 1;
  while (String(length).length + Buffer.byteLength(text) !== length)
    length = String(length).length + Buffer.byteLength(text);
  return `${length}${text}`;
}

function tarHeader(name: string, size: number, type: string, link: string, mode: number, mtime: number): Buffer {
  const h = Buffer.alloc(512);
  const put = (text: string, at: number, width: number) => h.write(text, at, Math.min(width, Buffer.byteLength(text)));
  const octal = (n: number, width: number) => n.toString(8).padStart(width - 1, '0');
  put(name, 0, 100);
  put(octal(mode, 8), 100, 8);
  put(octal(0, 8), 108, 8);
  put(octal(0, 8), 116, 8);
  put(octal(size, 12), 124, 12);
  put(octal(mtime, 12), 136, 12);
  h.fill(' ', 148, 156);
  put(type, 156, 1);
  put(link, 157, 100);
  put('ustar\u000000', 257, 8);
  let sum = 0;
  for (const byte of h) sum += byte;
  put(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 8);
  return h;
}

function padded(body: Buffer): Buffer {
  const rest = body.length % 512;
  return rest ? Buffer.concat([body, Buffer.alloc(512 - rest)]) : body;
}
