import type { ChatAnswer, ChatRequest } from './openai-compatible-server';

/**
 * The bundled offline model behind `npm run demo` when no LLM is configured. It is a script, not
 * a language model: it recognises the demo's question and plays the tool-calling part a real model
 * would, reading the tool results it was sent. Anything else gets a plain explanation.
 */
export function demoModel(request: ChatRequest): ChatAnswer {
  const lastUser = [...request.messages].reverse().find((m) => m.role === 'user');
  const question = String(lastUser?.content ?? '');
  const results = toolResultsSinceLastUser(request);
  const offered = new Set((request.tools ?? []).map((t) => t.function.name));

  const words = /letters in the words? "([^"]+)" and "([^"]+)"/i.exec(question);
  if (words && offered.has('stringLength') && offered.has('add') && offered.has('sqrt')) {
    const [a, b] = [words[1], words[2]];
    if (results.length === 0)
      return {
        toolCalls: [
          { name: 'stringLength', arguments: { s: a } },
          { name: 'stringLength', arguments: { s: b } },
        ],
      };
    if (results.length === 2)
      return { toolCalls: [{ name: 'add', arguments: { a: Number(results[0]), b: Number(results[1]) } }] };
    if (results.length === 3) return { toolCalls: [{ name: 'sqrt', arguments: { x: Number(results[2]) } }] };
    const root = Number(results[3]);
    return {
      content: `The square root of the sum of the numbers of letters in the words "${a}" and "${b}" is approximately ${round(root, 3)}.`,
    };
  }

  return {
    content:
      'I am the offline demo model bundled with durable-agents, not a real LLM: I only know the demo question. ' +
      'Set OPENAI_API_KEY (or OPENAI_BASE_URL for a local server) to talk to a real model.',
  };
}

function toolResultsSinceLastUser(request: ChatRequest): string[] {
  const out: string[] = [];
  for (const m of request.messages) {
    if (m.role === 'user') out.length = 0;
    else if (m.role === 'tool') out.push(String(m.content ?? ''));
  }
  return out;
}

function round(x: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}
