import type { ChatAnswer, ChatRequest } from './openai-compatible-server';

/**
 * The bundled offline model behind `npm run demo` when no LLM is configured. It is a script, not
 * a language model: it recognises the documents' examples and plays the tool-calling part a real
 * model would, reading the tool results it was sent. Anything else gets a plain explanation.
 */
export function demoModel(request: ChatRequest): ChatAnswer {
  const lastUser = [...request.messages].reverse().find((m) => m.role === 'user');
  const question = String(lastUser?.content ?? '');
  const results = toolResultsSinceLastUser(request);
  const offered = new Set((request.tools ?? []).map((t) => t.function.name));

  const words = /letters in the words? "([^"]+)" and "([^"]+)"/i.exec(question);
  if (words && offered.has('stringLength') && offered.has('add') && offered.has('sqrt')) {
    const [a, b] = [words[1], words[2]];
    if (results.length === 0) return { toolCalls: [{ name: 'stringLength', arguments: { s: a } }, { name: 'stringLength', arguments: { s: b } }] };
    if (results.length === 2) return { toolCalls: [{ name: 'add', arguments: { a: Number(results[0]), b: Number(results[1]) } }] };
    if (results.length === 3) return { toolCalls: [{ name: 'sqrt', arguments: { x: Number(results[2]) } }] };
    const root = Number(results[3]);
    return { content: `The square root of the sum of the numbers of letters in the words "${a}" and "${b}" is approximately ${round(root, 3)}.` };
  }

  const root = /square root of (-?[\d.]+)/i.exec(question);
  const rootTool = ['squareRoot', 'sqrt'].find((t) => offered.has(t));
  if (root && rootTool) {
    if (results.length === 0) return { toolCalls: [{ name: rootTool, arguments: { x: Number(root[1]) } }] };
    return { content: `The square root of ${root[1]} is ${results[0]}.` };
  }

  const weather = /weather|天气/i.test(question) && offered.has('search_weather');
  if (weather) {
    const city = /北京/.test(question) ? 'Beijing' : (/in ([A-Z][a-zA-Z ]+?)[?.!,]/.exec(question)?.[1] ?? 'Beijing');
    if (results.length === 0) return { toolCalls: [{ name: 'search_weather', arguments: { city } }] };
    return { content: `It is ${results[0]} degrees Celsius in ${city}: plan outdoor visits for the morning and evening, drink plenty of water and bring strong sunscreen.` };
  }

  return {
    content:
      'I am the offline demo model bundled with durable-agents, not a real LLM: I only know the examples from the documents. ' +
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
