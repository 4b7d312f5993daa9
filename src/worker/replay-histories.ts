import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { Client } from '@temporalio/client';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import type { temporal } from '@temporalio/proto';
import { Worker, type ReplayWorkerOptions } from '@temporalio/worker';
import { parseDuration } from '../core';
import { AGENT_WORKFLOW_TYPE, CONVERSATION_WORKFLOW_TYPE, SCHEDULED_TURN_WORKFLOW_TYPE } from '../common/definitions';
import { AgentsPlugin, type AgentsPluginOptions } from './agents-plugin';

/**
 * A deploy gate: replays recorded agent and conversation histories against the workflow code of
 * this process (the package installed now), so a change that would break the runs in flight
 * (non-determinism) fails in CI instead of in production. Histories come from a cluster (through
 * the client's data converter and the plugin's, so encrypted ones replay) or from JSON files
 * (`temporal workflow show --output json`).
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
    }
  | {
      /** A folder of JSON histories (or one file); each file's name is its workflow id. */
      dir: string;
    };

/** What {@link replayAgentHistories} found. */
export interface ReplayReport {
  replayed: number;
  failed: { workflowId: string; runId?: string; file?: string; error: string }[];
  /** Histories of other workflow types (from `--histories`), left out. */
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
    /** A prebuilt workflow bundle (tests); default: bundle the agent workflows. */
    workflowBundle?: ReplayWorkerOptions['workflowBundle'];
    onResult?: (r: { workflowId: string; file?: string; error?: string }) => void;
  } = {},
): Promise<ReplayReport> {
  const histories = 'dir' in source ? fromFiles(source.dir) : undefined;
  // Only agent workflows: the replay worker has no others, and their failures would read as ours.
  const query =
    'client' in source
      ? source.query === undefined
        ? replayQuery(source.since ?? '7d')
        : `${agentTypesClause()} AND (${source.query})`
      : undefined;
  const files = new Map<string, string>();
  const report: ReplayReport = { replayed: 0, failed: [], ...(query ? { query } : {}) };
  async function* all(): AsyncGenerator<{ workflowId: string; history: temporal.api.history.v1.IHistory }> {
    if (histories) {
      for (const h of histories) {
        // Another workflow's history (a folder of every export): not ours to judge.
        if (!REPLAYED_WORKFLOW_TYPES.includes(h.type)) {
          report.skipped = [
            ...(report.skipped ?? []),
            { workflowId: h.workflowId, file: h.file, workflowType: h.type },
          ];
          continue;
        }
        files.set(h.workflowId, h.file);
        yield { workflowId: h.workflowId, history: h.history };
      }
      return;
    }
    const { client, limit = 1_000 } = source as Extract<ReplaySource, { client: Client }>;
    let n = 0;
    for await (const execution of client.workflow.list({ query })) {
      if (n++ >= limit) break;
      const history = await client.workflow.getHandle(execution.workflowId, execution.runId).fetchHistory();
      yield { workflowId: execution.workflowId, history };
    }
  }
  const plugin = new AgentsPlugin({
    // Replays call no model: the endpoint only has to be well formed.
    model: { baseURL: 'http://127.0.0.1:1', apiKey: 'replay', model: 'replay', requestTimeoutMs: 1, configured: true },
    ...options.plugin,
  });
  for await (const result of Worker.runReplayHistories(
    {
      plugins: [plugin],
      ...(options.workflowBundle ? { workflowBundle: options.workflowBundle } : {}),
    },
    all(),
  )) {
    report.replayed += 1;
    const file = files.get(result.workflowId);
    const error = result.error ? result.error.message : undefined;
    if (error)
      report.failed.push({ workflowId: result.workflowId, runId: result.runId, ...(file ? { file } : {}), error });
    options.onResult?.({ workflowId: result.workflowId, ...(file ? { file } : {}), ...(error ? { error } : {}) });
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
    return { workflowId: basename(file).replace(/\.json$/, ''), file, history, type };
  });
}
