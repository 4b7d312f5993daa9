import { toolCallSummary } from '../core/context/summaries';
import type { RunOutcome } from '../client/run-agent';
import { budgetText } from './format-conversation';
import { usageText } from './usage-text';

/**
 * The human-readable report: the answer (unless `answerShown`: it was streamed already), each
 * tool execution, and the run's Web UI link.
 */
export function outcomeText(
  outcome: RunOutcome,
  uiLink: string | undefined,
  options: { answerShown?: boolean } = {},
): string {
  const lines: string[] = [];
  if (outcome.status === 'failed') lines.push(`Run failed: ${outcome.error ?? 'unknown error'}`);
  else if (outcome.status === 'immediate')
    lines.push('Returned immediately after its tools ran (no final answer from the LLM).');
  else if (outcome.status === 'cancelled') lines.push('Cancelled.');
  else if (!options.answerShown) lines.push(outcome.content ?? '');
  if (['max_iterations', 'time_limit', 'budget_exceeded', 'guardrail_tripped'].includes(outcome.status))
    lines.push(`(status: ${outcome.status})`);
  if (outcome.toolExecutions.length) {
    lines.push('', 'Tool executions:');
    for (const e of outcome.toolExecutions) {
      const notes = [
        e.immediate ? 'immediate' : '',
        e.approval ?? '',
        e.attempts ? `${e.attempts} attempts${e.workerLosses ? `, ${e.workerLosses} lost with their worker` : ''}` : '',
      ]
        .filter(Boolean)
        .join(', ');
      lines.push(
        `  ${e.error ? '✗' : '✓'} ${toolCallSummary(e.name, e.arguments)} → ${shortResult(e.result)}${notes ? `  (${notes})` : ''}`,
      );
    }
  }
  const u = outcome.usage;
  lines.push(
    '',
    `${outcome.iterations} LLM call${outcome.iterations === 1 ? '' : 's'}, ${usageText(u, { detail: true })}`,
  );
  if (outcome.budget) lines.push(`Budget: ${budgetText(outcome.budget)}`);
  lines.push(
    uiLink ? `Temporal UI: ${uiLink}` : `Workflow id: ${outcome.workflowId} (set TEMPORAL_UI_URL to get a Web UI link)`,
  );
  return lines.join('\n');
}

/** A tool's result on one line of a report: a 4 MB output is for `--json` and `history`, not a terminal. */
function shortResult(result: string | undefined): string {
  const text = (result ?? '').replace(/\s+/g, ' ');
  return text.length > 200 ? `${text.slice(0, 200)}… (${text.length} characters; --json has it all)` : text;
}
