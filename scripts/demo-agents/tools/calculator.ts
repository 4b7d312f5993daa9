import { z } from 'zod';
import { defineTool } from '../../../src/tools/define-tool';

/**
 * The calculator from the Quarkus LangChain4j "Agent and Tools" document: the chain
 * stringLength("hello"), stringLength("world"), add(5, 5), sqrt(10) answers its demo question.
 */

export const stringLength = defineTool({
  name: 'stringLength',
  description: 'Calculates the length of a string',
  parameters: z.object({ s: z.string().describe('The string to measure') }),
  execute: ({ s }) => [...s].length,
});

/** `add(a, b)`: adds two integers (the documents' `Calculator.add`). */
export const add = defineTool({
  name: 'add',
  description: 'Calculates the sum of two numbers',
  parameters: z.object({
    a: z.number().int().describe('First integer'),
    b: z.number().int().describe('Second integer'),
  }),
  execute: ({ a, b }) => a + b,
});

/** `sqrt(x)`: the square root of an integer (the Quarkus document's calculator). */
export const sqrt = defineTool({
  name: 'sqrt',
  description: 'Calculates the square root of a number',
  parameters: z.object({ x: z.number().int().describe('A non-negative integer') }),
  execute: ({ x }) => {
    // A tool error the LLM can act on, rather than NaN.
    if (x < 0) throw new Error(`cannot take the square root of a negative number (${x})`);
    return Math.sqrt(x);
  },
});

/** From the LangChain4j "Tools (Function Calling)" document. */
export const sum = defineTool({
  name: 'sum',
  description: 'Sums 2 given numbers',
  parameters: z.object({ a: z.number().describe('First number'), b: z.number().describe('Second number') }),
  execute: ({ a, b }) => a + b,
});

/** `squareRoot(x)`: the square root of a number (LangChain4j's MathGenius). */
export const squareRoot = defineTool({
  name: 'squareRoot',
  description: 'Returns a square root of a given number',
  parameters: z.object({ x: z.number().describe('The number') }),
  execute: ({ x }) => {
    if (x < 0) throw new Error(`cannot take the square root of a negative number (${x})`);
    return Math.sqrt(x);
  },
});
