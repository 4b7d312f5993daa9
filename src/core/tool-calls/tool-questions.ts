import type { Usage } from '../messages/chat-message';
import { addUsage, usageOfReply } from '../messages/usage';
import type { RunState } from '../state/run-state';

/**
 * A running tool's question to the run's model (an MCP server's sampling request), answered: what
 * the answer cost counts toward the run's usage (and so its budget), as its own model calls do.
 */
export function countModelAnswer(state: RunState, reply: { usage: Usage; model?: string }): RunState {
  return { ...state, usage: addUsage(state.usage, usageOfReply(reply.usage, reply.model)) };
}
