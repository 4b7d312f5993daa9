import { rerunResult, startRerun, type RerunOptions } from '../client/rerun';
import { outcomeJson } from '../client/outcome-json';
import { commandName } from './command-name';
import { parseFlags, UsageError, wholeNumber } from './option-flags';
import { approvalHint, retryText, watchProgress } from './progress';
import { inSession, type CommandTarget } from './session';

/** The usage line of `rerun`. */
export const RERUN_USAGE = `usage: ${commandName()} rerun <workflowId> [--from-step k] [--model NAME] [--system "..."] [--live-tools] [--id <new id>] [--json]`;

/** A parsed `rerun` command. */
export interface RerunCommand {
  workflowId: string;
  options: Omit<RerunOptions, 'taskQueue'>;
  json: boolean;
}

/** Parses `rerun` arguments. */
export function parseRerunArgs(argv: string[]): RerunCommand {
  const { values, positionals } = parseFlags(argv, {
    'from-step': { type: 'string' },
    model: { type: 'string' },
    system: { type: 'string' },
    'live-tools': { type: 'boolean', default: false },
    id: { type: 'string' },
    json: { type: 'boolean', default: false },
  });
  if (positionals.length !== 1)
    throw new UsageError(
      positionals.length === 0 ? 'missing the workflow id of the run to re-run' : 'rerun takes one workflow id',
    );
  const options: RerunCommand['options'] = { liveTools: values['live-tools'] ?? false };
  if (values['from-step'] !== undefined) options.fromStep = wholeNumber('--from-step', values['from-step'], 1);
  if (values.model !== undefined) {
    if (!values.model.trim()) throw new UsageError('--model needs a model name');
    options.model = values.model.trim();
  }
  if (values.system !== undefined) options.system = values.system;
  if (values.id !== undefined) options.workflowId = values.id;
  return { workflowId: positionals[0], options, json: values.json ?? false };
}

/** Re-runs a recorded run and prints its outcome and where it diverged from the recording. */
export async function runRerunCommand(
  cmd: RerunCommand,
  target: CommandTarget,
  io: { stdout: (text: string) => void; stderr: (line: string) => void },
): Promise<number> {
  return inSession(
    { ...target, needsWorker: true, note: (line) => (cmd.json ? undefined : io.stderr(line)) },
    async (session) => {
      const rerun = await startRerun(session.client, cmd.workflowId, { ...cmd.options, taskQueue: target.taskQueue });
      if (!cmd.json)
        io.stderr(
          `Re-running ${rerun.of} from model call ${rerun.fromStep} as ${rerun.handle.workflowId}${cmd.options.liveTools ? ' (tools run live)' : ' (identical tool calls get the recorded outputs)'}`,
        );
      // As `run` does: retries, approvals and failing workers are said while it waits (on stderr).
      const stopWatching = watchProgress(session.client, rerun.handle.workflowId, 'run', {
        retry: (r) => io.stderr(retryText(r)),
        approval: (p) => approvalHint(rerun.handle.workflowId, p).forEach((line) => io.stderr(line)),
        failing: (reason) => io.stderr(`The re-run makes no progress: its workers fail its workflow tasks: ${reason}`),
      });
      const { outcome, diverged } = await rerunResult(session.client, rerun).finally(stopWatching);
      const json = { ...outcomeJson(outcome), rerunOf: rerun.of, fromStep: rerun.fromStep, diverged };
      const text = [
        outcome.status === 'failed' ? `Re-run failed: ${outcome.error}` : (outcome.content ?? `(${outcome.status})`),
        '',
        diverged
          ? `Diverged at model call ${diverged.step}:\n  recorded: ${diverged.recorded}\n  re-run:   ${diverged.rerun}`
          : 'Same steps as the recorded run.',
        `Recorded: ${rerun.recorded.outcome.content ?? `(${rerun.recorded.outcome.status})`}`,
        `Workflow: ${rerun.handle.workflowId}${session.uiLink(rerun.handle.workflowId) ? ` (${session.uiLink(rerun.handle.workflowId)})` : ''}`,
      ].join('\n');
      io.stdout(cmd.json ? JSON.stringify(json) : text);
      return outcome.status === 'failed' ? 1 : 0;
    },
  );
}
