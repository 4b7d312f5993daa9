import { z } from 'zod';
import { defineAgent } from 'durable-agents';
import { lookupOrder } from './orders';

/** What the support agent answers with: structured, so your code can act on it. */
export const SupportAnswer = z.object({
  orderNumber: z.string(),
  status: z.enum(['processing', 'shipped', 'delivered', 'unknown']),
  reply: z.string().describe('The answer for the customer'),
});

export const supportAgent = defineAgent({
  name: 'support',
  description: 'Answers questions about orders',
  examples: ['Where is my order A-1001?'],
  instructions: 'You are a friendly support agent. Look the order up with lookup_order before you answer.',
  tools: [lookupOrder],
  maxIterations: 6,
  output: SupportAnswer,
});

/** The task queue the worker serves and the client uses. */
export const TASK_QUEUE = 'support-agent-example';
