import { applyModelReply, startRun } from '../../src/core/run/agent-loop';
import { carryOver, finishTurn, startConversation, startTurn } from '../../src/core/conversation/conversation';
import { densityOf, estimateTokens, messageTokens } from '../../src/core/context/compaction';
import { firstUncounted } from '../../src/core/context/run-context';
import type { ModelReply } from '../../src/core/messages/model-reply';
import { countNewMessages, textCounterFor } from '../../src/models/tokenizer';

/** Real token counts: counted once by the model-call activity, kept with the messages, used by the estimates. */

const reply = (promptTokens: number, counted?: Array<[number, number]>): ModelReply => ({
  content: 'ok',
  toolCalls: [],
  finishReason: 'stop',
  usage: { promptTokens, completionTokens: 2, totalTokens: promptTokens + 2 },
  ...(counted ? { counted } : {}),
});
const step = { type: 'call_model' as const, iteration: 1, toolNames: [], final: false };

describe('the tokenizer', () => {
  it('counts OpenAI models exactly, with the encoding of their generation', () => {
    const o200k = textCounterFor('gpt-4o-mini')!;
    const cl100k = textCounterFor('gpt-4')!;
    expect(o200k('hello world')).toBe(2);
    expect(textCounterFor('openai:gpt-5')).toBeDefined();
    // The two encodings differ on some text: each model gets its own.
    const text = 'Überprüfung der Größenordnung 東京 🚀 {"json": [1, 2, 3]}';
    expect(o200k(text)).not.toBe(cl100k(text));
    expect(textCounterFor('gpt-3.5-turbo')!(text)).toBe(cl100k(text));
    expect(textCounterFor('gpt-4.1')!(text)).toBe(o200k(text));
  });

  it('tells JSON from prose, which the rule of thumb cannot', () => {
    const count = textCounterFor('gpt-4o')!;
    const json = JSON.stringify(Array.from({ length: 200 }, (_, i) => ({ id: i, ok: i % 2 === 0, v: i * 1.5 })));
    const prose = 'The quick brown fox jumps over the lazy dog while the farmer watches. '.repeat(60);
    // Per character, the JSON costs far more tokens than the prose.
    expect(count(json) / json.length).toBeGreaterThan(1.5 * (count(prose) / prose.length));
  });

  it('counts the messages a call sent from countFrom on, by their run index', () => {
    const messages = [
      { role: 'system' as const, content: 'Be brief.' },
      { role: 'user' as const, content: 'hello world' },
      { role: 'assistant' as const, content: 'hi' },
    ];
    // The loader returned the head (index 0) and indices 7 and 8.
    const counted = countNewMessages(messages, { pinned: 1, from: 7, countFrom: 8 }, textCounterFor('gpt-4o')!);
    expect(counted).toEqual([
      [0, messageTokens(messages[0], textCounterFor('gpt-4o')!)],
      [8, messageTokens(messages[2], textCounterFor('gpt-4o')!)],
    ]);
    expect(countNewMessages(messages, { pinned: 1, from: 7, countFrom: 0 }, (t) => t.length).map(([i]) => i)).toEqual([
      0, 7, 8,
    ]);
  });
});

describe('counts in a run', () => {
  it('asks for counts only with memory by tokens, then from the first message no call counted', () => {
    expect(firstUncounted(startRun({ message: 'hi' }, []))).toBeUndefined();
    const state = startRun({ message: 'hello world', system: 'Be brief.', maxPromptTokens: 4000 }, []);
    expect(firstUncounted(state)).toBe(1); // after the system message, which is always counted
    const after = applyModelReply(
      state,
      step,
      reply(20, [
        [0, 7],
        [1, 6],
      ]),
    );
    expect(after.messages.map((m) => m.tokens)).toEqual([7, 6, undefined]);
    // The next call counts the reply and whatever follows it.
    expect(firstUncounted(after)).toBe(2);
  });

  it('estimates by the counts, and calibrates against them', () => {
    const state = startRun({ message: 'x'.repeat(4000), maxPromptTokens: 4000 }, []);
    expect(estimateTokens(state.messages)).toBe(1004); // characters over four
    const after = applyModelReply(state, step, reply(4500, [[0, 4000]]));
    expect(estimateTokens(after.messages.slice(0, 1))).toBe(4000);
    expect(after.lastPrompt).toEqual({ tokens: 4500, estimated: 4000 });
  });

  it('estimates what was not counted yet at the density of what was', () => {
    // Counted at half the rule of thumb: a new message of the same kind is estimated at half too.
    const counted = { role: 'user' as const, content: 'x'.repeat(4000), tokens: 502 };
    const fresh = { role: 'user' as const, content: 'y'.repeat(4000) };
    expect(densityOf([counted])).toBe(0.5);
    expect(estimateTokens([counted, fresh], densityOf([counted, fresh]))).toBe(502 + 502);
    expect(densityOf([fresh])).toBe(1);
  });

  it('replies without counts (older workers, no tokenizer) leave the estimates as they were', () => {
    const state = startRun({ message: 'x'.repeat(4000), maxPromptTokens: 4000 }, []);
    const after = applyModelReply(state, step, reply(1100));
    expect(after.messages.every((m) => m.tokens === undefined)).toBe(true);
    expect(after.lastPrompt).toEqual({ tokens: 1100, estimated: 1004 });
  });

  it('keeps the counts across conversation turns and continue-as-new', () => {
    let conv = startConversation({ system: 'Be brief.', maxPromptTokens: 4000 });
    let run = startTurn(conv, { message: 'hello' });
    run = applyModelReply(
      run,
      step,
      reply(30, [
        [0, 5],
        [1, 3],
      ]),
    );
    conv = finishTurn(conv, run);
    const next = startConversation({
      system: 'Be brief.',
      maxPromptTokens: 4000,
      carry: carryOver(conv, 'run-1'),
    });
    const turn = startTurn(next, { message: 'again' });
    expect(turn.messages.map((m) => m.tokens)).toEqual([undefined, 3, undefined, undefined]);
    // Counted from the last reply on (the system message is each turn's own, and always counted).
    expect(firstUncounted(turn)).toBe(2);
  });
});
