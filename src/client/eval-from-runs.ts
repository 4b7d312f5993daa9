import type { Client } from '@temporalio/client';
import { AGENT_WORKFLOW_TYPE } from '../contracts/definitions';
import type { EvalCase } from './eval-cases';
import { runOutcome, type AgentRunHandle } from './run-agent';
import { recordedRunInput } from './tool-results';
import { queryRefused } from './client-error';

/**
 * Recorded runs as an eval dataset (`eval --from-runs "<query>"`): each completed run found by the
 * visibility query becomes a case with its input, the tools it called (in order), and a judge that
 * compares the new answer with the recorded one. Production traffic becomes a regression suite.
 */
export async function casesFromRuns(client: Client, query: string, limit = 50): Promise<EvalCase[]> {
  const cases: EvalCase[] = [];
  const full = `WorkflowType = '${AGENT_WORKFLOW_TYPE}' AND ExecutionStatus = 'Completed' AND (${query})`;
  try {
    for await (const run of client.workflow.list({ query: full })) {
      if (cases.length >= limit) break;
      const handle = client.workflow.getHandle(run.workflowId, run.runId);
      const input = await recordedRunInput(await handle.fetchHistory(), client.options.loadedDataConverter);
      const outcome = await runOutcome(handle as AgentRunHandle);
      if (outcome.status !== 'completed') continue;
      const { rerun: _rerun, images: _images, ...rest } = input;
      const recorded = outcome.output !== undefined ? JSON.stringify(outcome.output) : (outcome.content ?? '');
      const c: EvalCase = {
        name: run.workflowId,
        input: rest,
        judge: `The answer agrees in substance with this earlier answer to the same request: ${JSON.stringify(recorded.slice(0, 4000))}`,
      };
      const tools = outcome.toolExecutions.map((e) => e.name);
      if (tools.length) c.expected = { toolCalls: tools };
      cases.push(c);
    }
  } catch (err) {
    throw queryRefused(err, '--from-runs');
  }
  return cases;
}
