import { readFileSync, writeFileSync } from 'node:fs';
import { validateAgentInput } from '../core/run/run-input';
import type { AgentInput } from '../core/state/run-options';
import { parseDataset, type NumberedCase } from '../client/eval-cases';
import { newEvalId, runEval, EVAL_SEARCH_ATTRIBUTE, type EvalReport } from '../client/run-eval';
import { listAgents } from '../client/list-agents';
import { casesFromRuns } from '../client/eval-from-runs';
import { commandName } from './command-name';
import { parseFlags, RUN_OPTION_FLAGS, runOptionsFromFlags, UsageError, wholeNumber } from './option-flags';
import { inSession, type CommandTarget } from './session';
import { usageText } from './usage-text';
import { tableText } from './table';

/** The usage line of `eval`. */
export const EVAL_USAGE = `usage: ${commandName()} eval (<dataset.jsonl> | --from-runs "<query>" [--limit N] [--save-dataset F]) [--agent name] [run options] [--concurrency 4] [--min-pass 1] [--compare <named model or agent>] [--judge-model NAME] [--json]`;

/** A parsed `eval` command. */
export interface EvalCommand {
  /** From a dataset file; empty with `fromRuns`. */
  cases: NumberedCase[];
  /** Recorded runs as the dataset: a visibility query, at most `limit`, saved to `saveDataset`. */
  fromRuns?: { query: string; limit: number; saveDataset?: string };
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
    'from-runs': { type: 'string' },
    limit: { type: 'string' },
    'save-dataset': { type: 'string' },
    json: { type: 'boolean', default: false },
  });
  const fromRuns = values['from-runs'];
  if (fromRuns !== undefined ? positionals.length !== 0 : positionals.length !== 1)
    throw new UsageError(
      fromRuns !== undefined
        ? '--from-runs replaces the dataset file: give one or the other'
        : positionals.length === 0
          ? 'missing the dataset (a .jsonl file), or --from-runs "<query>"'
          : 'eval takes one dataset',
    );
  if ((values.limit !== undefined || values['save-dataset'] !== undefined) && fromRuns === undefined)
    throw new UsageError('--limit and --save-dataset go with --from-runs');
  let cases: NumberedCase[] = [];
  if (fromRuns === undefined) {
    let text: string;
    try {
      text = readFileSync(positionals[0], 'utf8');
    } catch (err) {
      throw new UsageError(
        `cannot read ${positionals[0]}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      );
    }
    try {
      cases = parseDataset(text, positionals[0]);
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
  } else if (!fromRuns.trim())
    throw new UsageError(`--from-runs needs a visibility query, e.g. "AgentName = 'support'"`);
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
  if (values['judge-model'] !== undefined) {
    if (!values['judge-model'].trim()) throw new UsageError('--judge-model needs a model name');
    cmd.judgeModel = values['judge-model'].trim();
  }
  // Every case's run input, checked now: a bad one would otherwise fail as a case after the others ran.
  const problems = cases.flatMap((c) => {
    const input = { ...cmd.run, ...(typeof c.input === 'string' ? { message: c.input } : c.input) };
    return validateAgentInput(input).map((p) => `${positionals[0]}:${c.line}: ${p}`);
  });
  if (problems.length) throw new UsageError(problems.join('\n'));
  if (fromRuns !== undefined)
    cmd.fromRuns = {
      query: fromRuns,
      limit: values.limit === undefined ? 50 : wholeNumber('--limit', values.limit, 1),
      ...(values['save-dataset'] !== undefined ? { saveDataset: values['save-dataset'] } : {}),
    };
  return cmd;
}

/**
 * Runs the eval (and, with `--compare`, the same cases with the other model or agent) and prints
 * a table of cases and the summary. Exit 1 when the pass rate is under `--min-pass`.
 */
export async function runEvalCommand(
  given: EvalCommand,
  target: CommandTarget,
  io: { stdout: (text: string) => void; stderr: (line: string) => void },
): Promise<number> {
  let cmd = given;
  const { taskQueue } = target;
  return inSession(
    { ...target, needsWorker: true, note: (line) => (cmd.json ? undefined : io.stderr(line)) },
    async (session) => {
      const { client } = session;
      if (cmd.fromRuns) {
        const found = await casesFromRuns(client, cmd.fromRuns.query, cmd.fromRuns.limit);
        if (found.length === 0) throw new UsageError(`no completed runs match ${cmd.fromRuns.query}`);
        if (cmd.fromRuns.saveDataset)
          writeFileSync(cmd.fromRuns.saveDataset, `${found.map((c) => JSON.stringify(c)).join('\n')}\n`);
        cmd = { ...cmd, cases: found.map((c, i) => ({ ...c, line: i + 1 })) };
        if (!cmd.json)
          io.stderr(
            `${found.length} recorded run${found.length === 1 ? '' : 's'} as cases${cmd.fromRuns!.saveDataset ? `, saved to ${cmd.fromRuns!.saveDataset}` : ''}`,
          );
      }
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
      const total = cmd.cases.length * sides.length;
      let done = 0;
      for (const [i, side] of sides.entries())
        reports.push(
          await runEval(client, cmd.cases, {
            taskQueue,
            run: side.run,
            concurrency: cmd.concurrency,
            judgeModel: cmd.judgeModel,
            evalId: sides.length > 1 ? `${evalId}-${'ab'[i]}` : evalId,
            tag: evalId,
            onNote: (line) => io.stderr(line),
            // Each case as it ends, so a long eval shows it is moving (the table follows at the end).
            onCase: (c) => {
              done += 1;
              if (!cmd.json)
                io.stderr(
                  `${c.pass ? '✓' : '✗'} ${sides.length > 1 ? `${'AB'[i]} ` : ''}${c.name} (${done}/${total}, ${c.workflowId})`,
                );
            },
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
    },
  );
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
  const totals = reports.map((r, i) => {
    const s = r.summary;
    return `${reports.length > 1 ? `${'AB'[i]} (${labels[i]}): ` : ''}${s.passed}/${s.total} passed (${Math.round(s.passRate * 100)}%), ${usageText({ ...s.usage, ...(s.costUsd !== undefined ? { costUsd: s.costUsd } : {}) })}`;
  });
  return [tableText(header, rows), '', ...totals].join('\n');
}

function answerOf(r: EvalReport['cases'][number]): string {
  return r.output !== undefined ? JSON.stringify(r.output) : (r.content ?? r.status).replace(/\s+/g, ' ');
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
