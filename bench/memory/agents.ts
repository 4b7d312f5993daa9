/**
 * The agents of the memory eval (bench/memory-eval.ts): one with memory across conversations,
 * one without; the same instructions. Loaded by `durable-agents worker --module`.
 */
import { defineAgent } from '../../src/agents/define-agent';

const instructions = 'You are a personal assistant. Answer in one short sentence.';

export const agents = [
  defineAgent({ name: 'with-memory', instructions, tools: [], memory: { recall: true, extract: true } }),
  defineAgent({ name: 'without-memory', instructions, tools: [] }),
];
