import { outcomeJson } from '../client/outcome-json';
import type { AgentEvent } from '../core/events/agent-events';
import type { CommandContext } from './command';
import { EventPrinter } from './event-printer';
import { outcomeText } from './format-outcome';
import { readImageArguments } from './image-arguments';
import type { RunCommand } from './parse-run-args';
import { runFromCommandLine } from './run-flow';
import { TASK_QUEUE_HINT } from './session';

/**
 * `run "<message>"`: starts one run and follows it. Text mode shows the answer as it is written
 * (stdout) and each step (stderr); `--events` prints every event as a JSON line; `--json` one
 * object at the end. Exit 0 done, 1 failed, 3 `--wait` ran out, 130 Ctrl+C (the run goes on).
 */
export async function runRunCommand(command: RunCommand, { target, io }: CommandContext): Promise<number> {
  const { input, workflowId, waitMs, json, events, images } = command;
  const note = (line: string) => io.write(`${line}\n`, true);
  const printer = json || events ? undefined : new EventPrinter({ text: (text) => io.write(text), note });
  const onEvent = events
    ? (e: AgentEvent) => io.stdout(JSON.stringify(e))
    : printer
      ? (e: AgentEvent) => printer.show(e)
      : undefined;
  const r = await runFromCommandLine({
    input,
    images: await readImageArguments(images),
    workflowId,
    waitMs,
    ...target,
    note: json || events ? () => undefined : note,
    alert: note,
    onEvent,
    loggedEvents: events,
  });
  if ('outcome' in r) {
    printer?.endLine();
    if (json) io.stdout(JSON.stringify(outcomeJson(r.outcome)));
    else if (!events) io.stdout(outcomeText(r.outcome, r.uiLink, { answerShown: printer?.answerShown ?? false }));
    if (r.outcome.status === 'failed' && r.outcome.errorType === 'Agent.UnknownAgent')
      note(`Is the agent's worker on another task queue? Pick it with ${TASK_QUEUE_HINT}.`);
    return r.outcome.status === 'failed' ? 1 : 0;
  }
  note(r.followUp);
  if (json)
    io.stdout(
      JSON.stringify({
        workflowId: r.workflowId,
        status: 'running',
        error: r.followUp,
        errorType: 'Client.StillRunning',
      }),
    );
  return r.stoppedWaiting === 'interrupted' ? 130 : 3;
}
