import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { Client } from '@temporalio/client';
import { historyFromJSON, historyToJSON } from '@temporalio/common/lib/proto-utils';
import type { temporal } from '@temporalio/proto';
import { Worker, type ReplayWorkerOptions } from '@temporalio/worker';
import { parseDuration } from '../core/time/duration';
import {
  AGENT_WORKFLOW_TYPE,
  CONVERSATION_WORKFLOW_TYPE,
  SCHEDULED_TURN_WORKFLOW_TYPE,
} from '../contracts/definitions';
import { AgentsPlugin, type AgentsPluginOptions } from './agents-plugin';

/**
 * A deploy gate: replays recorded histories against the workflow code of this process (the
 * package installed now, and with `workflowsPath` the user's own workflows), so a change that
 * would break the runs in flight (non-determinism) fails in CI instead of in production.
 * Histories come from a cluster (through the client's data converter and the plugin's, so
 * encrypted ones replay) or from JSON files (`temporal workflow show --output json`).
 */

/** Where {@link replayAgentHistories} finds histories. */
export type ReplaySource =
  | {
      client: Client;
      /** A visibility query (default: agent and conversation workflows started within `since`). */
      query?: string;
      /** How far back, e.g. `"7d"` (default `"7d"`; ignored with `query`). */
      since?: string;
      /** At most this many workflows (default 1,000), newest first. */
      limit?: number;
      /**
       * With `workflowsPath`: the task queue of the user's worker, whose other workflows are
       * replayed too (without it, only the agent workflow types are fetched).
       */
      taskQueue?: string;
      /** Also write each history fetched to this folder as JSON (`<workflowId>.json`), for a later `--histories` replay. */
      save?: string;
    }
  | {
      /** A folder of JSON histories (or one file); each file's name is its workflow id. */
      dir: string;
    };

/** What {@link replayAgentHistories} found. */
export interface ReplayReport {
  replayed: number;
  failed: { workflowId: string; runId?: string; workflowType?: string; file?: string; error: string }[];
  /** Histories of workflow types this code does not define (none of the agents', none of `workflowsPath`), left out. */
  skipped?: { workflowId: string; file?: string; workflowType: string }[];
  /** The query histories were fetched with (from a cluster). */
  query?: string;
}

/** The workflow types a replay covers by default. */
export const REPLAYED_WORKFLOW_TYPES = [AGENT_WORKFLOW_TYPE, CONVERSATION_WORKFLOW_TYPE, SCHEDULED_TURN_WORKFLOW_TYPE];

/** The visibility query of a replay of the last `since` (e.g. `"7d"`). */
export function replayQuery(since: string, now = Date.now()): string {
  const from = new Date(now - parseDuration(since)).toISOString();
  return `${agentTypesClause()} AND StartTime > '${from}'`;
}

function agentTypesClause(): string {
  return `WorkflowType IN (${REPLAYED_WORKFLOW_TYPES.map((t) => `'${t}'`).join(', ')})`;
}

/**
 * Replays every history of `source` with the agent workflows and returns which failed, with the
 * non-determinism message. `plugin` configures the replay worker as the workers are configured
 * (encryption keys: default `AGENT_ENCRYPTION_KEYS`). `onResult` sees each result as it comes.
 */
export async function replayAgentHistories(
  source: ReplaySource,
  options: {
    plugin?: Omit<AgentsPluginOptions, 'agents' | 'tools'>;
    /**
     * The user's own workflows (their worker's `workflowsPath`): replayed with the agent
     * workflows, as the worker runs them, so a workflow that calls `executeAgent` is checked too.
     */
    workflowsPath?: string;
    /** A prebuilt workflow bundle (tests); default: bundle the agent workflows. */
    workflowBundle?: ReplayWorkerOptions['workflowBundle'];
    onResult?: (r: { workflowId: string; workflowType?: string; file?: string; error?: string }) => void;
  } = {},
): Promise<ReplayReport> {
  const histories = 'dir' in source ? fromFiles(source.dir) : undefined;
  const own = options.workflowsPath !== undefined;
  // Only agent workflows, unless the user's are given: the replay worker has no others, and their failures would read as ours.
  const types =
    own && 'client' in source && source.taskQueue
      ? `(${agentTypesClause()} OR TaskQueue = '${source.taskQueue}')`
      : agentTypesClause();
  const query =
    'client' in source
      ? source.query === undefined
        ? replayQuery(source.since ?? '7d').replace(agentTypesClause(), types)
        : `${types} AND (${source.query})`
      : undefined;
  const files = new Map<string, string>();
  const workflowTypes = new Map<string, string>();
  const report: ReplayReport = { replayed: 0, failed: [], ...(query ? { query } : {}) };
  const skip = (workflowId: string, workflowType: string, file?: string) => {
    report.skipped = [...(report.skipped ?? []), { workflowId, ...(file ? { file } : {}), workflowType }];
  };
  async function* all(): AsyncGenerator<{ workflowId: string; history: temporal.api.history.v1.IHistory }> {
    if (histories) {
      for (const h of histories) {
        // Another workflow's history (a folder of every export): not ours to judge.
        if (!own && !REPLAYED_WORKFLOW_TYPES.includes(h.type)) {
          skip(h.workflowId, h.type, h.file);
          continue;
        }
        files.set(h.workflowId, h.file);
        workflowTypes.set(h.workflowId, h.type);
        yield { workflowId: h.workflowId, history: h.history };
      }
      return;
    }
    const { client, limit = 1_000, save } = source as Extract<ReplaySource, { client: Client }>;
    if (save) mkdirSync(save, { recursive: true });
    const saved = new Set<string>();
    let n = 0;
    for await (const execution of client.workflow.list({ query })) {
      if (n++ >= limit) break;
      const history = await client.workflow.getHandle(execution.workflowId, execution.runId).fetchHistory();
      const id = execution.workflowId;
      workflowTypes.set(id, execution.type);
      if (save) {
        // Each run of a workflow (continue-as-new) in a file of its own: `<id>@<runId>.json` after the first.
        const name = encodeURIComponent(id) + (saved.has(id) ? `@${execution.runId}` : '');
        saved.add(id);
        writeFileSync(join(save, `${name}.json`), historyToJSON(history));
      }
      // Replayed under its own id: the ids of the runs it started derive from it.
      yield { workflowId: id, history };
    }
  }
  const plugin = new AgentsPlugin({
    // Replays call no model: the endpoint only has to be well formed.
    model: { baseURL: 'http://127.0.0.1:1', apiKey: 'replay', model: 'replay', requestTimeoutMs: 1, configured: true },
    // A replay worker polls no task queue: it has no build of a deployment to serve.
    deployment: false,
    ...options.plugin,
  });
  for await (const result of Worker.runReplayHistories(
    {
      plugins: [plugin],
      ...(options.workflowBundle ? { workflowBundle: options.workflowBundle } : {}),
      ...(options.workflowsPath && !options.workflowBundle ? { workflowsPath: options.workflowsPath } : {}),
    },
    all(),
  )) {
    const file = files.get(result.workflowId);
    const error = result.error ? result.error.message : undefined;
    // A type the code does not define (another service's workflow on the same queue): not ours to judge.
    if (error && own && /no such function is exported by the workflow bundle/.test(error)) {
      skip(result.workflowId, workflowTypes.get(result.workflowId) ?? '?', file);
      continue;
    }
    report.replayed += 1;
    if (error)
      report.failed.push({
        workflowId: result.workflowId,
        runId: result.runId,
        ...(workflowTypes.get(result.workflowId) ? { workflowType: workflowTypes.get(result.workflowId) } : {}),
        ...(file ? { file } : {}),
        error,
      });
    options.onResult?.({
      workflowId: result.workflowId,
      ...(workflowTypes.get(result.workflowId) ? { workflowType: workflowTypes.get(result.workflowId) } : {}),
      ...(file ? { file } : {}),
      ...(error ? { error } : {}),
    });
  }
  return report;
}

/** The JSON histories of a folder (or one file): the file name without `.json` is the workflow id. */
function fromFiles(
  path: string,
): { workflowId: string; file: string; history: temporal.api.history.v1.IHistory; type: string }[] {
  let names: string[];
  try {
    names = statSync(path).isDirectory()
      ? readdirSync(path)
          .filter((f) => f.endsWith('.json'))
          .sort()
          .map((f) => join(path, f))
      : [path];
  } catch (err) {
    throw new Error(
      `--histories: cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    );
  }
  if (names.length === 0) throw new Error(`--histories: ${path} holds no .json histories`);
  return names.map((file) => {
    let history;
    try {
      history = historyFromJSON(JSON.parse(readFileSync(file, 'utf8')));
    } catch (err) {
      throw new Error(
        `${file} is not a workflow history in JSON (temporal workflow show --output json): ${(err as Error).message}`,
      );
    }
    const type = history.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name;
    if (!type) throw new Error(`${file} is not a whole workflow history: its first event must be the workflow's start`);
    // `<workflowId>@<runId>.json`: another run of the same workflow; ids percent-encoded (as `--save` names them).
    return { workflowId: workflowIdOf(basename(file).replace(/\.json$/, '')), file, history, type };
  });
}

/** The workflow id a history file is named after: without a run's `@<runId>`, percent-decoded. */
function workflowIdOf(name: string): string {
  const id = name.replace(/@[0-9a-f-]{36}$/, '');
  try {
    return decodeURIComponent(id);
  } catch {
    return id; // a name with a stray `%` is taken as it is
  }
}
