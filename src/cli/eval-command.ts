import { readFileSync } from 'node:fs';
import type { AgentInput } from '../core';
import { parseDataset, type NumberedCase } from '../client/eval-cases';
import { newEvalId, runEval, EVAL_SEARCH_ATTRIBUTE, type EvalReport } from '../client/run-eval';
import { listAgents } from '../client/list-agents';
import { commandName } from './command-name';
import { parseFlags, RUN_OPTION_FLAGS, runOptionsFromFlags, UsageError, wholeNumber } from './option-flags';
import { openSession, type LocalWorker } from './session';

/** The usage line of `eval`. */
export const EVAL_USAGE = `usage: ${commandName()} eval <dataset.jsonl> [--agent name] [run options] [--concurrency 4] [--min-pass 1] [--compare <named model or agent>] [--judge-model NAME] [--json]`;

/** A parsed `eval` command. */
export interface EvalCommand {
  cases: NumberedCase[];
  run: Omit<AgentInput, 'message'>;
  concurrency: number;
  minPass: number;
  compare?: string;
  judgeModel?: string;
  json: boolean;
}

/** Parses `eval` arguments and reads the dataset: every problem before anything runs. */
export function parseEvalArgs(argv: string[], registeredTools: readonly string[] | undefined): EvalCommand {
  const { values, positionals } = parseFlags(argv, {
    ...RUN_OPTION_FLAGS,
    concurrency: { type: 'string' },
    'min-pass': { type: 'string' },
    compare: { type: 'string' },
    'judge-model': { type: 'string' },
    json: { type: 'boolean', default: false },
  });
  if (positionals.length !== 1)
    throw new UsageError(positionals.length === 0 ? 'missing the dataset (a .jsonl file)' : 'eval takes one dataset');
  let text: string;
  try {
    text = readFileSync(positionals[0], 'utf8');
  } catch (err) {
    throw new UsageError(
      `cannot read ${positionals[0]}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    );
  }
  let cases: NumberedCase[];
  try {
    cases = parseDataset(text, positionals[0]);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  let minPass = 1;
  if (values['min-pass'] !== undefined) {
    const raw = values['min-pass'];
    if (!/^(0(\.\d+)?|1(\.0+)?)$/.test(raw))
      throw new UsageError(`--min-pass must be a pass rate from 0 to 1, got "${raw}"`);
    minPass = Number(raw);
  }
  const cmd: EvalCommand = {
    cases,
    run: runOptionsFromFlags(values, registeredTools),
    concurrency: values.concurrency === undefined ? 4 : wholeNumber('--concurrency', values.concurrency, 1),
    minPass,
    json: values.json ?? false,
  };
  if (values.compare !== undefined) {
    if (!values.compare.trim()) throw new UsageError('--compare needs a named model or agent');
    cmd.compare = values.compare.trim();
  }
  if (values['judge-model'] !== undefined) cmd.judgeModel = values['judge-model'];
  return cmd;
}

/**
 * Runs the eval (and, with `--compare`, the same cases with the other model or agent) and prints
 * a table of cases and the summary. Exit 1 when the pass rate is under `--min-pass`.
 */
export async function runEvalCommand(
  cmd: EvalCommand,
  taskQueue: string,
  io: { stdout: (text: string) => void; stderr: (line: string) => void },
  localWorker?: LocalWorker,
): Promise<number> {
  const session = await openSession({
    taskQueue,
    localWorker,
    needsWorker: true,
    note: (line) => (cmd.json ? undefined : io.stderr(line)),
  });
  try {
    return await session.run(async () => {
      const { client } = session;
      const evalId = newEvalId();
      const sides: { label: string; run: Omit<AgentInput, 'message'> }[] = [{ label: describe(cmd.run), run: cmd.run }];
      if (cmd.compare) {
        const agents = await listAgents(client, { taskQueue });
        const other = agents.some((a) => a.name === cmd.compare)
          ? { ...cmd.run, agent: cmd.compare }
          : { ...cmd.run, modelSettings: { ...cmd.run.modelSettings, model: cmd.compare } };
        sides.push({ label: describe(other), run: other });
      }
      if (!cmd.json)
        io.stderr(
          `Eval ${evalId}: ${cmd.cases.length} case${cmd.cases.length === 1 ? '' : 's'}${sides.length > 1 ? ` × ${sides.length}` : ''}; the runs are listed by ${EVAL_SEARCH_ATTRIBUTE}='${evalId}' (or WorkflowId STARTS_WITH '${evalId}')`,
        );
      const reports: EvalReport[] = [];
      for (const [i, side] of sides.entries())
        reports.push(
          await runEval(client, cmd.cases, {
            taskQueue,
            run: side.run,
            concurrency: cmd.concurrency,
            judgeModel: cmd.judgeModel,
            evalId: sides.length > 1 ? `${evalId}-${'ab'[i]}` : evalId,
          }),
        );
      const [main, compared] = reports;
      if (cmd.json) {
        for (const [i, c] of main.cases.entries())
          io.stdout(JSON.stringify(compared ? { ...c, compare: compared.cases[i] } : c));
        io.stdout(
          JSON.stringify({
            evalId,
            ...main.summary,
            ...(compared ? { compare: { label: sides[1].label, ...compared.summary } } : {}),
          }),
        );
      } else
        io.stdout(
          reportText(
            reports,
            sides.map((s) => s.label),
          ),
        );
      return main.summary.passRate < cmd.minPass ? 1 : 0;
    });
  } finally {
    await session.close();
  }
}

function describe(run: Omit<AgentInput, 'message'>): string {
  const parts = [
    run.agent ? `agent ${run.agent}` : '',
    run.modelSettings?.model ? `model ${run.modelSettings.model}` : '',
  ];
  return parts.filter(Boolean).join(', ') || 'the defaults';
}

/** The cases as a table, then each side's summary. */
export function reportText(reports: readonly EvalReport[], labels: readonly string[]): string {
  const [main] = reports;
  const cell = (r: EvalReport['cases'][number]) =>
    `${r.pass ? '✓' : '✗'} ${r.pass ? answerOf(r) : r.reasons.join('; ')}`;
  const header = ['CASE', ...labels.map((l, i) => (reports.length > 1 ? `${'AB'[i]}: ${l}` : 'RESULT'))];
  const rows = main.cases.map((c, i) => [
    c.name,
    ...reports.map((r) => clip(cell(r.cases[i]), reports.length > 1 ? 50 : 90)),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]))
      .join('  ')
      .trimEnd();
  const totals = reports.map((r, i) => {
    const s = r.summary;
    const cost = s.costUsd !== undefined ? `, $${s.costUsd.toFixed(4)}` : '';
    return `${reports.length > 1 ? `${'AB'[i]} (${labels[i]}): ` : ''}${s.passed}/${s.total} passed (${Math.round(s.passRate * 100)}%), ${s.usage.totalTokens} tokens${cost}`;
  });
  return [line(header), ...rows.map(line), '', ...totals].join('\n');
}

function answerOf(r: EvalReport['cases'][number]): string {
  return r.output !== undefined ? JSON.stringify(r.output) : (r.content ?? r.status).replace(/\s+/g, ' ');
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
