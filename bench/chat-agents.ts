/**
 * The agents of the chat latency bench (`bench/chat-latency.ts`), served by `durable-agents serve
 * --module bench/chat-agents.ts`: `chat` answers, `tooler` looks something up first. The plain
 * route (bench/peer/plain-route.js) offers the same tool.
 */
import { z } from 'zod';
import { defineAgent } from '../src/agents/define-agent';
import { defineTool } from '../src/tools';

export const tools = [
  defineTool({
    name: 'lookup',
    description: 'Looks a word up',
    parameters: z.object({ word: z.string() }),
    execute: ({ word }) => `${word}: a word`,
    local: true,
  }),
];

export const agents = [
  defineAgent({ name: 'chat', instructions: 'Answer briefly.', tools: [] }),
  defineAgent({ name: 'tooler', instructions: 'Look words up, then answer.', tools: ['lookup'] }),
];
