import { z } from 'zod';
import { defineAgent } from '../../src/agents/define-agent';
import { exampleTools } from '../../scripts/demo-agents';
import {
  defineJsonSchemaTool,
  defineTool,
  PersonAsked,
  ToolRegistry,
  type ToolContext,
  type ToolProvider,
} from '../../src/tools';
import { toolOutput } from '../../src/tools/tool-output';

/** Tools that exercise the runtime's edges; registered next to the built-ins in workflow tests. */

export const notify = defineTool({
  name: 'notify',
  description: 'Sends a notification',
  parameters: z.object({ to: z.string() }),
  returnBehavior: 'immediate',
  execute: () => undefined,
});

export const failAttempts: Record<string, number> = {};
export const flaky = defineTool({
  name: 'flaky',
  description: 'Always fails',
  parameters: z.object({ key: z.string() }),
  retry: { maximumAttempts: 2, initialInterval: '100ms' },
  execute: ({ key }) => {
    failAttempts[key] = (failAttempts[key] ?? 0) + 1;
    throw new Error('the flux capacitor is offline');
  },
});

export const aborted: Record<string, boolean> = {};
export const slow = defineTool({
  name: 'slow',
  description: 'Waits for a long time, honouring cancellation',
  parameters: z.object({ key: z.string() }),
  timeout: '5m',
  execute: ({ key }, ctx) =>
    new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => resolve('done'), 120_000);
      ctx.signal.addEventListener('abort', () => {
        aborted[key] = true;
        clearTimeout(timer);
        reject(new Error('aborted'));
      });
    }),
});

export const seenContexts: Array<{ toolCallId: string; idempotencyKey: string; attempt: number; workflowId: string }> =
  [];
export const blob = defineTool({
  name: 'blob',
  description: 'Returns n characters',
  parameters: z.object({ n: z.number().int() }),
  execute: ({ n }, ctx) => {
    seenContexts.push({
      toolCallId: ctx.toolCallId,
      idempotencyKey: ctx.idempotencyKey,
      attempt: ctx.attempt,
      workflowId: ctx.workflowId,
    });
    return 'x'.repeat(n);
  },
});

export const transfers: Array<{ to: string; amount: number }> = [];
export const transfer = defineTool({
  name: 'transfer',
  description: 'Transfers money',
  parameters: z.object({ to: z.string(), amount: z.number() }),
  needsApproval: true,
  execute: (args) => {
    transfers.push(args);
    return `sent ${args.amount} to ${args.to}`;
  },
});

/** A tool that asks a person mid-call which account to pay from (`ctx.askPerson`), then pays from it. */
export const payFromAccount = defineTool({
  name: 'pay_from_account',
  description: 'Pays an amount from an account a person names',
  parameters: z.object({ amount: z.number() }),
  execute: (args, ctx) => {
    if (!ctx.answer) return ctx.askPerson(`Pay ${args.amount} from which account?`);
    return ctx.answer.approved ? `paid ${args.amount} from ${ctx.answer.text ?? 'the usual account'}` : 'not paid';
  },
});

/** A tool that asks the run's model mid-call (`ctx.askModel`, as an MCP server's sampling does). */
export const askTheModel = defineTool({
  name: 'ask_the_model',
  description: "Asks the run's model a side question",
  parameters: z.object({ question: z.string() }),
  execute: (args, ctx) => {
    if (!ctx.answer) return ctx.askModel({ messages: [{ role: 'user', content: args.question }], maxTokens: 50 });
    return ctx.answer.approved ? `the model said: ${ctx.answer.text}` : `no answer: ${ctx.answer.text}`;
  },
});

/** The documents' programmatic tool: a JSON Schema and an executor, no zod. */
export const bookingLookups: Array<{ bookingNumber: string; conversationId: string }> = [];
export const getBookingDetails = defineJsonSchemaTool({
  name: 'get_booking_details',
  description: 'Returns booking details',
  parameters: {
    type: 'object',
    properties: { bookingNumber: { type: 'string', description: 'Booking number in B-12345 format' } },
    required: ['bookingNumber'],
  },
  execute: (args, ctx) => {
    bookingLookups.push({ bookingNumber: String(args.bookingNumber), conversationId: ctx.conversationId });
    return { bookingNumber: args.bookingNumber, customer: 'Ada Lovelace', from: '2026-12-01', to: '2026-12-05' };
  },
});

/** A fast tool that runs as a local activity. */
export const stockQuote = defineTool({
  name: 'stock_quote',
  description: 'Returns the price of a stock',
  parameters: z.object({ symbol: z.string() }),
  local: true,
  execute: ({ symbol }) => ({ symbol, price: 42.5 }),
});

/** A tool whose result carries an image (a 1x1 PNG), stored by reference. */
export const snapshot = defineTool({
  name: 'snapshot',
  description: 'Takes a snapshot of the screen',
  parameters: z.object({}),
  execute: () =>
    toolOutput({
      text: 'the screen',
      images: [
        {
          data: 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
        },
      ],
    }),
});

/** The documents' dynamic-tools example: offer the booking tool only when the user mentions a booking. */
export const bookingToolProvider: ToolProvider = ({ userMessage }) =>
  userMessage.includes('booking') ? ['get_booking_details'] : [];

export function testRegistry(): ToolRegistry {
  return new ToolRegistry([
    ...exampleTools,
    notify,
    flaky,
    slow,
    blob,
    transfer,
    stockQuote,
    snapshot,
    payFromAccount,
    askTheModel,
  ]).register(getBookingDetails, { dynamic: true });
}

/** Named agents of the recorded histories: one with structured output, one for conversations. */
export function testAgents() {
  return [
    defineAgent({
      name: 'forecaster',
      instructions: 'Look the weather up, then answer as JSON.',
      tools: ['search_weather'],
      maxIterations: 5,
      output: z.object({ city: z.string(), celsius: z.number() }),
    }),
    defineAgent({
      name: 'clerk',
      instructions: 'You are a clerk. Be brief.',
      tools: ['add', 'sqrt'],
      model: 'clerk-model',
      maxExecutionTime: '5m',
    }),
    // A model and its fallback, on the same endpoint.
    defineAgent({
      name: 'resilient',
      instructions: 'Answer.',
      tools: ['add'],
      model: ['primary-model', 'backup-model'],
    }),
    // Multi-agent: an agent called as a tool (a child workflow), and a handoff.
    defineAgent({
      name: 'writer',
      instructions: 'You write.',
      tools: [],
      agents: [
        defineAgent({ name: 'researcher', description: 'Finds facts', instructions: 'You research.', tools: [] }),
      ],
    }),
    defineAgent({
      name: 'triage',
      instructions: 'You triage.',
      tools: [],
      handoffs: [
        defineAgent({ name: 'billing', instructions: 'You are billing.', tools: ['add'], model: 'billing-model' }),
      ],
    }),
  ];
}

/**
 * A tool context outside a run, for calling a tool by hand: asking a person or the model throws
 * (`PersonAsked`, as the tool activity turns into a question), `answer` as given.
 */
export function toolContext(overrides: Partial<ToolContext> = {}): ToolContext {
  return {
    conversationId: 'w',
    workflowId: 'w',
    runId: 'r',
    toolCallId: 'c',
    idempotencyKey: 'k',
    attempt: 1,
    signal: new AbortController().signal,
    checkpoint: () => undefined,
    askPerson: (question, progress, form) => {
      throw new PersonAsked(question, progress, form);
    },
    askModel: () => {
      throw new Error('it asked the model, which only a durable run can do');
    },
    reportProgress: () => undefined,
    credential: async () => undefined,
    ...overrides,
  } as ToolContext;
}
