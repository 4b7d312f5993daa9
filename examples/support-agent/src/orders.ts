import { z } from 'zod';
import { defineTool } from 'durable-agents';

/** A stand-in for your order system. */
const ORDERS: Record<string, { status: 'processing' | 'shipped' | 'delivered'; eta?: string }> = {
  'A-1001': { status: 'shipped', eta: '2026-12-03' },
  'A-1002': { status: 'processing' },
  'A-1003': { status: 'delivered' },
};

/** A custom tool: the agent calls it to look an order up. It runs in the worker, as an activity. */
export const lookupOrder = defineTool({
  name: 'lookup_order',
  description: 'Looks up an order by its number and returns its status and expected delivery date',
  parameters: z.object({ orderNumber: z.string().describe('The order number, e.g. A-1001') }),
  execute: ({ orderNumber }) => {
    const order = ORDERS[orderNumber.trim().toUpperCase()];
    if (!order) throw new Error(`no order ${orderNumber}`);
    return { orderNumber, ...order };
  },
});
