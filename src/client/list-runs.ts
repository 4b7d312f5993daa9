import type { Client, WorkflowExecutionInfo } from '@temporalio/client';
import { agentListQuery, type AgentListFilter } from '../core/run/search-attributes';
import { AGENT_WORKFLOW_TYPE, CONVERSATION_WORKFLOW_TYPE } from '../contracts/definitions';
import { queryRefused } from './client-error';

/** One run or conversation as `client.ts list` and `GET /runs` show it. */
export interface AgentRunSummary {
  workflowId: string;
  kind: 'run' | 'conversation';
  /** Temporal's status: Running, Completed, Failed, ... */
  executionStatus: string;
  /** `AgentStatus`: thinking, running_tools, awaiting_approval, idle, or how it ended. Absent when the workflow keeps no search attributes. */
  agentStatus?: string;
  agent?: string;
  model?: string;
  iterations?: number;
  totalTokens?: number;
  /** `AgentVersion`: which definition of the agent answered (see `agentVersion`). */
  agentVersion?: string;
  /** The tenant it works for (`AgentTenant`). */
  tenant?: string;
  /** With Worker Versioning: the build it is pinned to (from `TemporalWorkerDeploymentVersion`). */
  buildId?: string;
  startTime: string;
  closeTime?: string;
}

/**
 * Lists agent runs and conversations newest first, filtered by the agent search attributes
 * (`AgentStatus`, `AgentName`): a visibility query, so it needs those attributes registered in
 * the namespace (the embedded dev server has them).
 */
export async function listAgentRuns(
  client: Client,
  filter: AgentListFilter & {
    limit?: number;
    only?: 'run' | 'conversation';
    /** What the caller calls `query` in errors: `--query` (the default) on the command line, `query` over HTTP. */
    queryName?: string;
  },
): Promise<{ query: string; runs: AgentRunSummary[] }> {
  const { only: kind, queryName = '--query', ...rest } = filter;
  const types =
    kind === undefined
      ? [AGENT_WORKFLOW_TYPE, CONVERSATION_WORKFLOW_TYPE]
      : [kind === 'run' ? AGENT_WORKFLOW_TYPE : CONVERSATION_WORKFLOW_TYPE];
  const query = agentListQuery(rest, types);
  const limit = filter.limit ?? 20;
  const runs: AgentRunSummary[] = [];
  try {
    for await (const info of client.workflow.list({ query, pageSize: Math.min(limit, 100) })) {
      runs.push(summaryOf(info));
      if (runs.length >= limit) break;
    }
  } catch (err) {
    throw queryRefused(err, filter.query !== undefined ? queryName : 'the list filter');
  }
  return { query, runs };
}

function summaryOf(info: WorkflowExecutionInfo): AgentRunSummary {
  const attribute = (name: string) => info.searchAttributes?.[name]?.[0];
  const summary: AgentRunSummary = {
    workflowId: info.workflowId,
    kind: info.type === CONVERSATION_WORKFLOW_TYPE ? 'conversation' : 'run',
    executionStatus: info.status.name,
    startTime: info.startTime.toISOString(),
  };
  const put = <K extends keyof AgentRunSummary>(key: K, value: unknown) => {
    if (value !== undefined && value !== null) summary[key] = value as AgentRunSummary[K];
  };
  put('agentStatus', attribute('AgentStatus'));
  put('agent', attribute('AgentName'));
  put('model', attribute('AgentModel'));
  put('iterations', attribute('AgentIterations'));
  put('totalTokens', attribute('AgentTotalTokens'));
  put('agentVersion', attribute('AgentVersion'));
  put('tenant', attribute('AgentTenant'));
  const version = attribute('TemporalWorkerDeploymentVersion');
  if (typeof version === 'string' && version.includes(':')) summary.buildId = version.slice(version.indexOf(':') + 1);
  put('closeTime', info.closeTime?.toISOString());
  return summary;
}
