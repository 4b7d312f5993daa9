import type { ChatAnswer, ChatRequest } from '../../src/testing/chat-request';

/**
 * The memory eval's model: deterministic, so the scores measure the memory (what is kept, what a
 * later session is shown) and not a model's mood. As the assistant, it answers a question from
 * the <memory> block when the block has the fact, and says it does not know otherwise; as the
 * extractor, it turns "I live in X"-style statements into facts, updating a kept fact on a change.
 */

/** What a statement says, and how a fact about it reads. */
const TOPICS: { said: RegExp; fact: (v: string) => string; kept: RegExp; asked: RegExp }[] = [
  {
    said: /I (?:live|moved) (?:in|to) ([A-Z][a-z]+)/,
    fact: (v) => `Lives in ${v}`,
    kept: /Lives in (\w+)/,
    asked: /where do I live/i,
  },
  {
    said: /my dog is called ([A-Z][a-z]+)/i,
    fact: (v) => `Has a dog called ${v}`,
    kept: /Has a dog called (\w+)/,
    asked: /my dog's name|what is my dog called/i,
  },
  {
    said: /I am allergic to (\w+)/i,
    fact: (v) => `Is allergic to ${v}`,
    kept: /Is allergic to (\w+)/,
    asked: /allergic/i,
  },
  {
    said: /I (?:prefer|now prefer) (aisle|window) seats/i,
    fact: (v) => `Prefers ${v} seats`,
    kept: /Prefers (\w+) seats/,
    asked: /which seat/i,
  },
  {
    said: /I work (?:as|now as) an? ([a-z]+)/i,
    fact: (v) => `Works as a ${v}`,
    kept: /Works as a (\w+)/,
    asked: /my job|what do I do/i,
  },
  {
    said: /my favourite colou?r is (\w+)/i,
    fact: (v) => `Favourite colour is ${v}`,
    kept: /Favourite colour is (\w+)/,
    asked: /favourite colou?r/i,
  },
];

export function memoryEvalModel(req: ChatRequest): ChatAnswer {
  const system = String(req.messages[0]?.content ?? '');
  if (system.startsWith('You keep the long-term memory')) return { content: extract(String(req.messages[1].content)) };
  const question = [...req.messages]
    .reverse()
    .find((m) => m.role === 'user' && !String(m.content).startsWith('<memory>'));
  const text = String(question?.content ?? '');
  const memory = String(
    req.messages.find((m) => m.role === 'user' && String(m.content).startsWith('<memory>'))?.content ?? '',
  );
  // A statement is noted (the extractor keeps it); a question is answered from memory.
  const topic = TOPICS.find((t) => t.asked.test(text));
  if (!topic || TOPICS.some((t) => t.said.test(text))) return { content: 'Noted.' };
  const found = topic.kept.exec(memory)?.[1];
  return { content: found ? `From what you told me: ${found}.` : "I don't know." };
}

/** The extractor's reply: facts stated in the exchange; a kept fact of the same topic is updated. */
function extract(request: string): string {
  const kept = [...request.matchAll(/^- \[(f_\w+)\] (.+)$/gm)].map((m) => ({ id: m[1], text: m[2] }));
  const said = [...request.matchAll(/^User: (.+)$/gm)].map((m) => m[1]).join(' ');
  const add: { text: string }[] = [];
  const update: { id: string; text: string }[] = [];
  for (const t of TOPICS) {
    const v = t.said.exec(said)?.[1];
    if (!v) continue;
    const old = kept.find((k) => t.kept.test(k.text));
    if (old) update.push({ id: old.id, text: t.fact(v) });
    else add.push({ text: t.fact(v) });
  }
  return JSON.stringify({ add, update, retire: [] });
}
