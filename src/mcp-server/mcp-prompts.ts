import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import type { AgentSummary } from '../contracts/activity-interface';
import { MAX_MESSAGE_CHARS } from '../core/run/run-input';
import { listAgentRuns } from '../client/list-runs';
import type { AgentMcpServerOptions } from './mcp-server-options';

/**
 * Each agent as a prompt: its description and examples, and an optional `message` (completed from
 * the examples) that asks the agent, through its tool, what the person wants.
 */
export function registerPrompts(server: McpServer, agents: readonly AgentSummary[]): void {
  for (const agent of agents) {
    server.registerPrompt(agent.name, { ...promptMetadata(agent), argsSchema: PROMPT_ARGUMENTS }, ({ message }) =>
      agentPrompt(agent, message),
    );
  }
}

/** What an agent's prompt takes. */
export const PROMPT_ARGUMENTS = {
  message: z.string().max(MAX_MESSAGE_CHARS).optional().describe('What to ask the agent'),
};

/** An agent's prompt's title and description (its examples in it). */
export function promptMetadata(agent: AgentSummary): { title: string; description: string } {
  const examples = agent.examples ?? [];
  return {
    title: `Ask ${agent.name}`,
    description: `${agent.description ?? `The ${agent.name} agent.`}${examples.length ? ` For example: ${examples.map((e) => JSON.stringify(e)).join(', ')}.` : ''}`,
  };
}

/** An agent's prompt: asks the agent, through its tool, `message` (or its first example). */
export function agentPrompt(
  agent: AgentSummary,
  message: string | undefined,
): { description: string; messages: { role: 'user'; content: { type: 'text'; text: string } }[] } {
  const ask = message?.trim() || agent.examples?.[0] || `What can you do?`;
  return {
    description: `Ask the ${agent.name} agent`,
    messages: [
      {
        role: 'user',
        content: { type: 'text', text: `Ask the ${agent.name} agent (the tool "${agent.name}"): ${ask}` },
      },
    ],
  };
}

/**
 * Completions: an agent prompt's `message` from the agent's examples, a run's or conversation's
 * id from the recent ones (open first). Anything else completes to nothing.
 */
export async function complete(
  options: AgentMcpServerOptions,
  params: { ref: { type: string; name?: string; uri?: string }; argument: { name: string; value: string } },
): Promise<{ values: string[]; total?: number; hasMore?: boolean }> {
  const { ref, argument } = params;
  const prefix = argument.value.toLowerCase();
  let values: string[] = [];
  if (ref.type === 'ref/prompt' && argument.name === 'message') {
    const agent = options.agents.find((a) => a.name === ref.name);
    values = (agent?.examples ?? []).filter((e) => e.toLowerCase().startsWith(prefix));
  } else if (ref.type === 'ref/resource' && argument.name === 'id' && ref.uri) {
    const kind = ref.uri.startsWith('durable-agents://runs/')
      ? 'run'
      : ref.uri.startsWith('durable-agents://conversations/')
        ? 'conversation'
        : undefined;
    // The template itself (`durable-agents://runs/{id}`): its id completes.
    if (kind && ref.uri.endsWith('{id}')) {
      // Of the template's kind only (a page of conversations would crowd out the runs), finished
      // ones too: a finished run's transcript is readable.
      const { runs } = await listAgentRuns(options.client, {
        limit: 200,
        only: kind,
        taskQueue: options.taskQueue,
        ...options.scope,
      }).catch(() => ({
        runs: [],
      }));
      values = runs
        .filter((r) => r.kind === kind && r.workflowId.toLowerCase().startsWith(prefix))
        .sort((a, b) => Number(!!a.closeTime) - Number(!!b.closeTime))
        .map((r) => r.workflowId);
    }
  }
  // The protocol's limit: 100 values a reply.
  return { values: values.slice(0, 100), total: values.length, hasMore: values.length > 100 };
}
