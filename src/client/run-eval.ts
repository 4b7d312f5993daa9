import { randomBytes } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { status } from '@grpc/grpc-js';
import { defineSearchAttributeKey, TypedSearchAttributes } from '@temporalio/common';
import { addUsage } from '../core/messages/usage';
import { searchAttributeCreateCommands } from '../core/run/search-attributes';
import { validateAgentInput } from '../core/run/run-input';
import type { AgentInput } from '../core/state/run-options';
import type { Usage } from '../core/messages/chat-message';
import { AGENT_WORKFLOW_TYPE } from '../contracts/definitions';
import { expectationFailures, type EvalCase, type NumberedCase } from './eval-cases';
import { runOutcome, startAgentRun, type AgentRunHandle, type AgentRunWorkflow, type RunOutcome } from './run-agent';

/**
 * Runs an eval: every case of a dataset as a real agent run (tagged `AgentEval = <evalId>` where
 * the namespace has that search attribute, and always under workflow ids `<evalId>-<n>`, so the
 * Temporal UI lists an eval's runs), scored by its expectations and, when it names criteria, by an
 * LLM judge (one more run, without tools, answering `{ pass, reason }` under a schema).
 */

/** The search attribute eval runs carry (a Keyword; the embedded dev server registers it). */
export const EVAL_SEARCH_ATTRIBUTE = 'AgentEval';

/** Options of {@link runEval}. */
export interface EvalOptions {
  taskQueue: string;
  /** Run options for every case, under each case's own (e.g. `{ agent: 'support', maxIterations: 6 }`). */
  run?: Omit<AgentInput, 'message'>;
  /** Cases run at once (default 4). */
  concurrency?: number;
  /** The judge's model (default: the worker's default model). */
  judgeModel?: string;
  /** The eval's id (default `eval-<time>-<random>`); its runs' ids start with it. */
  evalId?: string;
  /**
   * The `AgentEval` value the runs are tagged with (default: `evalId`). Two runs of one dataset
   * compared side by side (`eval --compare`) share it, their ids telling the sides apart.
   */
  tag?: string;
  /** Called as each case finishes. */
  onCase?: (result: EvalCaseResult) => void;
  /** Told once what a person may want to act on (a namespace without the `AgentEval` attribute: how to add it). */
  onNote?: (line: string) => void;
}

/** How one case went. */
export interface EvalCaseResult {
  /** The case's name, else `line N`. */
  name: string;
  line?: number;
  workflowId: string;
  status: string;
  content?: string;
  output?: unknown;
  pass: boolean;
  /** Why it failed: one reason per check that did not hold (the judge's too). */
  reasons: string[];
  /** The judge's verdict, for cases with criteria. */
  judge?: { pass: boolean; reason: string };
  usage: Usage;
}

/** The totals of an eval. */
export interface EvalSummary {
  total: number;
  passed: number;
  failed: number;
  passRate: number;
  usage: Usage;
  /** Dollars by the workers' price table, when every model has a price. */
  costUsd?: number;
}

/** An eval's results. */
export interface EvalReport {
  evalId: string;
  cases: EvalCaseResult[];
  summary: EvalSummary;
}

const NO_USAGE: Usage = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };

const JUDGE_SYSTEM =
  'You grade the answer of an AI agent against criteria. Judge only by the criteria. Answer as JSON: {"pass": true or false, "reason": "one sentence"}.';

const VERDICT = {
  type: 'object',
  properties: { pass: { type: 'boolean' }, reason: { type: 'string' } },
  required: ['pass', 'reason'],
  additionalProperties: false,
} as const;

/** A fresh eval id: `eval-20261125-0830-3f9a`. */
export function newEvalId(now = new Date()): string {
  const stamp = now.toISOString().slice(0, 16).replace(/[-:]/g, '').replace('T', '-');
  return `eval-${stamp}-${randomBytes(2).toString('hex')}`;
}

/** Runs the cases and scores them; a case whose run fails counts as failed, with the reason. */
export async function runEval(client: Client, cases: readonly (EvalCase | NumberedCase)[], options: EvalOptions) {
  const evalId = options.evalId ?? newEvalId();
  const results: EvalCaseResult[] = new Array(cases.length);
  let tagged = true;
  const start = async (input: AgentInput, workflowId: string): Promise<AgentRunHandle> => {
    const key = defineSearchAttributeKey(EVAL_SEARCH_ATTRIBUTE, 'KEYWORD');
    if (tagged) {
      try {
        return await startTagged(
          client,
          input,
          workflowId,
          options.taskQueue,
          new TypedSearchAttributes([{ key, value: options.tag ?? evalId }]),
        );
      } catch (err) {
        // A namespace without the attribute: the runs go untagged (their ids still name the eval).
        if (!lacksSearchAttribute(err, EVAL_SEARCH_ATTRIBUTE)) throw err;
        if (tagged) {
          tagged = false;
          const namespace = client.options.namespace;
          options.onNote?.(
            `The namespace "${namespace}" has no ${EVAL_SEARCH_ATTRIBUTE} search attribute: the runs go untagged (their workflow ids start with ${evalId}). To tag them: ${searchAttributeCreateCommands(namespace, [{ name: EVAL_SEARCH_ATTRIBUTE, type: 'Keyword' }])[0]}`,
          );
        }
      }
    }
    return startAgentRun(client, input, { taskQueue: options.taskQueue, workflowId });
  };
  let next = 0;
  const worker = async () => {
    while (next < cases.length) {
      const i = next++;
      results[i] = await runCase(cases[i], i, evalId, options, start);
      options.onCase?.(results[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(options.concurrency ?? 4, cases.length) }, worker));
  return { evalId, cases: results, summary: summarize(results) };
}

/**
 * Whether starting a workflow failed because the namespace has no such search attribute. The
 * server says so in the start's cause (a gRPC INVALID_ARGUMENT naming the attribute); the error
 * itself only says "Failed to start Workflow".
 */
function lacksSearchAttribute(err: unknown, name: string): boolean {
  for (let e: unknown = err; e instanceof Error; e = e.cause) {
    const code = (e as { code?: unknown }).code;
    const text = `${e.message} ${(e as { details?: unknown }).details ?? ''}`;
    if (
      (code === undefined || code === status.INVALID_ARGUMENT) &&
      text.includes(name) &&
      /search attribute/i.test(text)
    )
      return true;
  }
  return false;
}

function startTagged(
  client: Client,
  input: AgentInput,
  workflowId: string,
  taskQueue: string,
  typedSearchAttributes: TypedSearchAttributes,
): Promise<AgentRunHandle> {
  return client.workflow.start<AgentRunWorkflow>(AGENT_WORKFLOW_TYPE, {
    taskQueue,
    workflowId,
    args: [input],
    typedSearchAttributes,
    staticSummary: `eval: ${input.message.slice(0, 100)}`,
  });
}

async function runCase(
  c: EvalCase | NumberedCase,
  index: number,
  evalId: string,
  options: EvalOptions,
  start: (input: AgentInput, workflowId: string) => Promise<AgentRunHandle>,
): Promise<EvalCaseResult> {
  const line = 'line' in c ? c.line : undefined;
  const name = c.name ?? (line !== undefined ? `line ${line}` : `case ${index + 1}`);
  const input: AgentInput = { ...options.run, ...(typeof c.input === 'string' ? { message: c.input } : c.input) };
  const workflowId = `${evalId}-${index + 1}`;
  const problems = validateAgentInput(input);
  if (problems.length)
    return {
      name,
      ...(line ? { line } : {}),
      workflowId,
      status: 'failed',
      pass: false,
      reasons: problems,
      usage: NO_USAGE,
    };
  let outcome: RunOutcome;
  let started = false;
  try {
    const handle = await start(input, workflowId);
    started = true;
    outcome = await runOutcome(handle);
  } catch (err) {
    return {
      name,
      ...(line ? { line } : {}),
      workflowId,
      status: 'failed',
      pass: false,
      reasons: [`${started ? 'its result could not be read' : 'the run could not start'}: ${(err as Error).message}`],
      usage: NO_USAGE,
    };
  }
  let reasons: string[];
  try {
    reasons = expectationFailures(c.expected, outcome);
  } catch (err) {
    // One case's check that cannot run must not lose the other cases' results.
    reasons = [`the expectation could not be checked: ${(err as Error).message}`];
  }
  const result: EvalCaseResult = {
    name,
    ...(line ? { line } : {}),
    workflowId,
    status: outcome.status,
    ...(typeof outcome.content === 'string' ? { content: outcome.content } : {}),
    ...(outcome.output !== undefined && outcome.output !== null ? { output: outcome.output } : {}),
    pass: false,
    reasons,
    usage: outcome.usage ?? NO_USAGE,
  };
  if (c.judge && outcome.status !== 'failed') {
    const verdict = await judge(c.judge, input, outcome, workflowId, options, start);
    result.judge = { pass: verdict.pass, reason: verdict.reason };
    result.usage = addUsage(result.usage, verdict.usage);
    if (!verdict.pass) reasons.push(`the judge: ${verdict.reason}`);
  }
  result.pass = reasons.length === 0;
  return result;
}

async function judge(
  criteria: string,
  input: AgentInput,
  outcome: RunOutcome,
  workflowId: string,
  options: EvalOptions,
  start: (input: AgentInput, workflowId: string) => Promise<AgentRunHandle>,
): Promise<{ pass: boolean; reason: string; usage: Usage }> {
  const answer = outcome.output !== undefined ? JSON.stringify(outcome.output) : (outcome.content ?? '');
  const message = `Criteria: ${criteria}\n\nThe request:\n${input.message}\n\nThe answer:\n${answer}\n\nDoes the answer meet the criteria?`;
  const judgeInput: AgentInput = {
    message,
    system: JUDGE_SYSTEM,
    tools: [],
    output: VERDICT as unknown as AgentInput['output'],
    maxIterations: 3,
    ...(options.judgeModel ? { modelSettings: { model: options.judgeModel } } : {}),
  };
  try {
    const handle = await start(judgeInput, `${workflowId}-judge`);
    const verdict = await runOutcome(handle);
    const out = verdict.output as { pass?: unknown; reason?: unknown } | undefined;
    if (verdict.status !== 'completed' || typeof out?.pass !== 'boolean')
      return {
        pass: false,
        reason: `no verdict (${verdict.status}${verdict.error ? `: ${verdict.error}` : ''})`,
        usage: verdict.usage ?? NO_USAGE,
      };
    return { pass: out.pass, reason: String(out.reason ?? ''), usage: verdict.usage ?? NO_USAGE };
  } catch (err) {
    return { pass: false, reason: `the judge could not run: ${(err as Error).message}`, usage: NO_USAGE };
  }
}

/** The totals of some case results. */
export function summarize(results: readonly EvalCaseResult[]): EvalSummary {
  const passed = results.filter((r) => r.pass).length;
  const usage = results.reduce((sum, r) => addUsage(sum, r.usage), NO_USAGE);
  const costs = results.map((r) => r.usage.costUsd);
  const summary: EvalSummary = {
    total: results.length,
    passed,
    failed: results.length - passed,
    passRate: results.length ? Math.round((passed / results.length) * 1000) / 1000 : 0,
    usage: {
      promptTokens: usage.promptTokens,
      completionTokens: usage.completionTokens,
      totalTokens: usage.totalTokens,
    },
  };
  if (costs.every((c) => c !== undefined)) summary.costUsd = Math.round(costs.reduce((a, b) => a + b!, 0) * 1e6) / 1e6;
  return summary;
}
