import type { ModelConfig } from '../activities';
import type { AgentInput } from '../core';
import { runOutcome, startAgentRun, type RunOutcome } from '../runtime/run-agent';
import { openSession } from './session';

export interface RunFlowOptions {
  input: AgentInput;
  workflowId?: string;
  taskQueue: string;
  /** Model for the in-process worker (default: from the environment). */
  model?: ModelConfig;
  /** Progress notes for people; commands send them to stderr. */
  note: (line: string) => void;
}

/** Runs one agent run from a command line (see {@link openSession} for where it runs). */
export async function runFromCommandLine(options: RunFlowOptions): Promise<{ outcome: RunOutcome; uiLink?: string }> {
  const session = await openSession(options);
  try {
    const handle = await startAgentRun(session.client, options.input, { taskQueue: options.taskQueue, workflowId: options.workflowId });
    const uiLink = session.uiLink(handle.workflowId);
    options.note(`Started ${handle.workflowId}${uiLink ? ` (${uiLink})` : ''}`);
    const outcome = await session.run(() => runOutcome(handle));
    return { outcome, uiLink };
  } finally {
    await session.close();
  }
}
