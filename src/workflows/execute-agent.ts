import {
  ChildWorkflowFailure,
  executeChild,
  isCancellation,
  uuid4,
  workflowInfo,
  type ChildWorkflowOptions,
} from '@temporalio/workflow';
import { agentWorkflowId, runSummary } from '../core/context/summaries';
import type { AgentInput } from '../core/state/run-options';
import type { AgentResult, AgentWorkflowResult, RecordedTurnResult } from '../core/state/run-results';
import { AGENT_WORKFLOW_TYPE } from '../contracts/definitions';
import { failureInfo } from './failure-info';
import { parentTenant, TENANT_KEY } from './search-attributes';

/** Options of {@link executeAgent}: the run's input, plus where and under which id the child runs. */
export interface ExecuteAgentOptions extends AgentInput {
  /** Child workflow id; default: `agent-<first words of the message>-<6 hex>`. */
  workflowId?: string;
  /** Default: this workflow's task queue. The worker there must have the agent (via `AgentsPlugin`). */
  taskQueue?: string;
  /** Any other child workflow option (e.g. `workflowExecutionTimeout`). */
  childOptions?: Omit<ChildWorkflowOptions, 'workflowId' | 'taskQueue' | 'args'>;
}

/**
 * Runs an agent from your own workflow, as a child workflow: it has its own history, limits and
 * approvals, shows under this workflow in the Temporal UI, and is cancelled with it. Returns the
 * run's result; a run that failed comes back as `status: "failed"` with `error` and `errorType`,
 * not as an exception, so the calling workflow decides what a failed agent means to it. Tool
 * outputs the child's history holds are left out of its result (`resultInHistory`): a workflow
 * acts on the agent's answer, and the outputs stay readable in the child's history. `O` types the
 * agent's structured `output` (`executeAgent<SupportAnswer>({ agent: 'support', ... })`): workflow
 * code cannot import the agent's zod schema, so the type is the caller's word.
 */
export async function executeAgent<O = unknown>(options: ExecuteAgentOptions): Promise<RecordedTurnResult<O>> {
  const { workflowId, taskQueue, childOptions, ...given } = options;
  // A child works for its parent's tenant unless told otherwise (Temporal carries the priority).
  const inherited = parentTenant();
  const tenant = given.tenant ?? inherited;
  const input: AgentInput = tenant === undefined ? given : { ...given, tenant };
  const id = workflowId ?? agentWorkflowId(input.message, uuid4().replace(/-/g, '').slice(0, 6));
  try {
    return await executeChild<(input: AgentInput) => Promise<AgentWorkflowResult<O>>>(AGENT_WORKFLOW_TYPE, {
      ...childOptions,
      args: [input],
      workflowId: id,
      taskQueue: taskQueue ?? workflowInfo().taskQueue,
      staticSummary: childOptions?.staticSummary ?? runSummary(input.message),
      // The attribute only where the namespace has it (the parent has it): an unknown one fails the task.
      ...(tenant !== undefined && inherited !== undefined && childOptions?.typedSearchAttributes === undefined
        ? { typedSearchAttributes: [{ key: TENANT_KEY, value: tenant }] }
        : {}),
      // A child for another tenant than its parent's is dispatched by that tenant's share.
      ...(given.tenant !== undefined && given.tenant !== inherited && childOptions?.priority === undefined
        ? { priority: { fairnessKey: given.tenant } }
        : {}),
    });
  } catch (err) {
    if (isCancellation(err) || !(err instanceof ChildWorkflowFailure)) throw err;
    const { error, errorType } = failureInfo(err.cause);
    const partial = (err.cause as { details?: unknown[] } | undefined)?.details?.[0] as
      Partial<AgentResult> | undefined;
    return {
      workflowId: id,
      status: 'failed',
      content: null,
      toolExecutions: partial?.toolExecutions ?? [],
      iterations: partial?.iterations ?? 0,
      usage: partial?.usage ?? { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
      error,
      errorType,
    };
  }
}
