import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import { unnamedAgentVersion } from '../core/run/agent-version';
import type { ToolInfo } from '../core/messages/tool-info';
import type { AgentActivities, ResolveToolsInput } from '../contracts/activity-interface';

/** The workflows' activities (see `AgentActivities`, their contract), and the options they are scheduled with. */

/**
 * How long an activity may go without a heartbeat before Temporal assumes its worker died and
 * retries it elsewhere. Model and tool calls heartbeat every 2 s (throttled to one per 2 s), so 8 s
 * allows for a missed beat while a crashed worker costs a call about 8 s plus the retry interval,
 * not the 30 s it used to. A tool must therefore not block the event loop for 8 s (use a worker
 * thread for heavy CPU work).
 */
export const HEARTBEAT_TIMEOUT = '8s';

/** Attempts of one model call; clients show it in progress messages. */
export const MODEL_CALL_ATTEMPTS = 8;

// Tool and agent resolution are registry lookups: a local activity keeps each to one marker in history.
export const { resolveTools, resolveAgent } = proxyLocalActivities<AgentActivities>({
  startToCloseTimeout: '30s',
  retry: { maximumAttempts: 3 },
});

/**
 * The tools of a run or conversation without a named agent, and its version: its definition as
 * given with the tools as the worker resolved them.
 */
export async function resolveToolsAndVersion(
  request: ResolveToolsInput,
  definition: object,
): Promise<{ tools: ToolInfo[]; version: string }> {
  const resolved = await resolveTools(request);
  return { tools: resolved.tools, version: unnamedAgentVersion(definition, resolved.version) };
}

// All five are always called with per-call options (a summary, the tool's timeout) via executeWithOptions.
export const { callModel, executeTool, summarizeMessages, sampleModel, checkGuardrails } =
  proxyActivities<AgentActivities>({
    startToCloseTimeout: '5m',
  });
// Memory across conversations (agents' `memory`): a recall is a database read; an extraction is a
// model call, which heartbeats like one.
export const { recallMemory } = proxyActivities<AgentActivities>({
  startToCloseTimeout: '30s',
  retry: { maximumAttempts: 5 },
});
export const { extractMemory } = proxyActivities<AgentActivities>({
  startToCloseTimeout: '5m',
  heartbeatTimeout: HEARTBEAT_TIMEOUT,
  retry: { maximumAttempts: 5 },
});
// Tools declared `local: true`; also always called with per-call options.
export const { executeTool: executeToolLocally } = proxyLocalActivities<AgentActivities>({ startToCloseTimeout: '1m' });

/**
 * Attempts of a tool call whose worker was lost (crashed, killed, cut off: its heartbeats
 * stopped), on top of the tool's own attempts, which count only its failures.
 */
export const WORKER_LOSSES_PER_CALL = 10;

// Policies decide in the workflow task that goes on to run the calls: a local activity, a few
// milliseconds of the worker's own CPU, tried again quickly when it fails.
export const { decidePolicies } = proxyLocalActivities<AgentActivities>({
  startToCloseTimeout: '10s',
  retry: { maximumAttempts: 3, initialInterval: '100ms' },
});
