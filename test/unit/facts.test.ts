import { parseMemoryArgs } from '../../src/cli/memory-command';
import { EventLog } from '../../src/core/events/event-log';
import {
  FORGOTTEN_TEXT,
  forgetInConversation,
  forgetInRun,
  forgetInValue,
  forgetQuotes,
  forgottenFacts,
} from '../../src/core/conversation/forgetting';
import { startConversation } from '../../src/core/conversation/conversation';
import { startRun } from '../../src/core/run/agent-loop';
import type { RunState } from '../../src/core/state/run-state';
import { agentMemoryProblem, memoryPlan } from '../../src/core/facts/memory-options';
import { extractionRequest, parseFactChanges } from '../../src/core/facts/fact-extraction';
import { fingerprint, findFingerprints } from '../../src/core/facts/fingerprints';
import { fuseRankings, newFactProblem, recallBlock } from '../../src/core/facts/fact';
import { memoryFilterProblem, memoryScopeProblem, userProblem } from '../../src/core/facts/memory-scope';
import type { ChatMessage } from '../../src/core/messages/chat-message';

const AT = '2026-11-28T10:00:00.000Z';

describe('facts: shapes and checks', () => {
  it('takes user ids an account or an email gives, and refuses what needs quoting', () => {
    expect(userProblem('alice@example.com')).toBeUndefined();
    expect(userProblem('acct:42')).toBeUndefined();
    expect(userProblem('a b')).toMatch(/must be a user id/);
    expect(userProblem("o'neil")).toMatch(/must be a user id/);
    expect(memoryScopeProblem({})).toMatch(/start the run or conversation with "user"/);
    expect(memoryFilterProblem({})).toBe('say whose memory: --user U, --tenant T, or both');
    expect(memoryFilterProblem({}, true)).toBeUndefined();
    expect(memoryFilterProblem({ user: 'bad user' })).toMatch(/^--user must be a user id/);
  });

  it('keeps one statement per fact', () => {
    expect(newFactProblem({ text: 'Prefers aisle seats' })).toBeUndefined();
    expect(newFactProblem({ text: '  ' })).toMatch(/needs its text/);
    expect(newFactProblem({ text: 'x'.repeat(1001) })).toMatch(/at most 1000 characters/);
    expect(newFactProblem({ text: 'ok', confidence: 2 })).toMatch(/from 0 to 1/);
  });

  it('fuses a full-text ranking and a vector ranking by reciprocal rank', () => {
    // b is second in both: it beats a, first in one list only.
    expect(
      fuseRankings(
        [
          ['a', 'b', 'c'],
          ['d', 'b'],
        ],
        3,
      ),
    ).toEqual(['b', 'a', 'd']);
    expect(fuseRankings([['a', 'b']], 1)).toEqual(['a']);
    expect(fuseRankings([], 5)).toEqual([]);
  });

  it('shows the profile and the facts in one block, and nothing when there is nothing', () => {
    expect(recallBlock([])).toBe('');
    expect(recallBlock([], {})).toBe('');
    const block = recallBlock([{ id: 'f1', text: 'Lives in Lyon', updatedAt: AT }], { seat: 'aisle' });
    expect(block).toContain('Profile: {"seat":"aisle"}');
    expect(block).toContain('- Lives in Lyon (2026-11-28, id f1)');
  });

  it('reads an extraction reply, dropping what is malformed or names no kept fact', () => {
    const reply =
      'Sure: {"add":[{"text":"Lives in Lyon","confidence":0.9},{"text":""},{"nope":1}],"update":[{"id":"f1","text":"Moved to Nice"},{"id":"zz","text":"x"}],"retire":["f2","zz"],"profile":{"seat":"aisle"}}';
    expect(parseFactChanges(reply, new Set(['f1', 'f2']))).toEqual({
      add: [{ text: 'Lives in Lyon', confidence: 0.9 }],
      update: [{ id: 'f1', text: 'Moved to Nice' }],
      retire: ['f2'],
      profile: { seat: 'aisle' },
    });
    expect(parseFactChanges('no JSON here', new Set())).toEqual({ add: [], update: [], retire: [] });
    expect(parseFactChanges('{broken', new Set())).toEqual({ add: [], update: [], retire: [] });
    expect(extractionRequest([], [{ role: 'user', text: 'hi' }])).toBe(
      'Facts already kept:\n(none)\n\nExchange:\nUser: hi',
    );
  });

  it('plans an agent memory with defaults, and names what is wrong with one', () => {
    expect(memoryPlan(undefined)).toBeUndefined();
    expect(memoryPlan({ scope: 'agent' })).toBeUndefined();
    expect(memoryPlan({ recall: true })).toEqual({ scope: 'user', recall: 8, extract: false });
    expect(memoryPlan({ recall: { limit: 99 }, extract: { model: 'small' } })).toEqual({
      scope: 'user',
      recall: 50,
      extract: { model: 'small' },
    });
    expect(agentMemoryProblem({ recal: true })).toMatch(/unknown settings: recal/);
    expect(agentMemoryProblem({ scope: 'team' })).toMatch(/"user" or "agent"/);
    expect(agentMemoryProblem({ recall: { limit: 0 } })).toMatch(/limit from 1 to 50/);
  });
});

describe('forgetQuotes: a deletion reaching the copies a conversation keeps', () => {
  const fact = 'Prefers aisle seats on long flights';
  const messages: ChatMessage[] = [
    { role: 'system', content: 'You help with travel.' },
    { role: 'user', content: 'I like the aisle. Remember that.' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'c1', type: 'function', function: { name: 'remember', arguments: JSON.stringify({ text: fact }) } },
      ],
    },
    { role: 'tool', tool_call_id: 'c1', content: JSON.stringify({ id: 'f1', text: fact }), tokens: 20 },
    { role: 'assistant', content: 'Noted.' },
    { role: 'user', content: 'Book me to Tokyo.' },
  ];

  it('replaces the fact in the remember call, its result and any text quoting it', () => {
    const { messages: out, changed } = forgetQuotes(messages, { at: AT, facts: [{ text: fact, ref: 'c1' }] });
    expect(changed).toBe(2);
    expect(JSON.stringify(out)).not.toContain('aisle seats');
    expect(out[3]).toEqual({ role: 'tool', tool_call_id: 'c1', content: '{"forgotten":true}' });
    expect(
      JSON.parse((out[2] as { tool_calls: { function: { arguments: string } }[] }).tool_calls[0].function.arguments),
    ).toEqual({
      text: FORGOTTEN_TEXT,
    });
    // What quoted nothing is the same object (nothing copied, nothing recounted).
    expect(out[1]).toBe(messages[1]);
  });

  it('is told the facts by fingerprint, never by text, and finds them the same', () => {
    const told = forgottenFacts([{ text: fact, ref: 'c1' }, { text: 'He said "call me Al" twice' }], AT, 'a1b2c3d4');
    // Nothing of the facts' words in what the workflow's history will hold.
    expect(JSON.stringify(told)).not.toMatch(/aisle|seats|flights|call me/);
    expect(told.facts[0]).toEqual({ ref: 'c1', fingerprints: [{ length: fact.length, hash: expect.any(String) }] });
    // A fact with quotes has a second form: JSON-escaped, as in a tool call's arguments.
    expect(told.facts[1].fingerprints).toHaveLength(2);
    const byPrint = forgetQuotes(messages, told);
    const byText = forgetQuotes(messages, { at: AT, facts: [{ text: fact, ref: 'c1' }] });
    expect(byPrint).toEqual(byText);
    expect(JSON.stringify(byPrint.messages)).not.toContain('aisle seats');
    // The JSON-escaped form is found in a tool call's arguments.
    const quoting: ChatMessage[] = [
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'c9',
            type: 'function',
            function: { name: 'note', arguments: JSON.stringify({ t: 'He said "call me Al" twice' }) },
          },
        ],
      },
    ];
    expect(JSON.stringify(forgetQuotes(quoting, told).messages)).not.toContain('call me Al');
    // Another seed, other fingerprints: a deletion's are its own.
    expect(forgottenFacts([{ text: fact }], AT, 'other').facts[0].fingerprints).not.toEqual(told.facts[0].fingerprints);
  });

  it('finds fingerprints in a long text (one pass per length), and only exact texts', () => {
    const seed = '0f1e2d3c';
    const target = 'Lives at 12 Baker Street';
    const prints = [fingerprint(target, seed)];
    const haystack = `${'lorem ipsum dolor '.repeat(50_000)}${target} and Lives at 12 Baker Streets`;
    const found = findFingerprints(haystack, prints, seed);
    expect(found).toEqual([
      [900_000, 900_000 + target.length],
      [900_000 + target.length + 5, 900_000 + 2 * target.length + 5],
    ]);
    expect(findFingerprints('Lives at 12 Baker Streer', prints, seed)).toEqual([]);
  });

  it('marks a summary that quoted the fact or covered the call that stated it, once', () => {
    const summarised: ChatMessage[] = [
      ...messages,
      { role: 'system', content: `Earlier: the user ${fact.toLowerCase()}.`, summary: { from: 1, to: 5 } },
      { role: 'system', content: 'Earlier: they asked about Tokyo.', summary: { from: 5, to: 6 } },
    ];
    const first = forgetQuotes(summarised, { at: AT, facts: [{ text: fact, ref: 'c1' }] });
    const summary = first.messages[6] as Extract<ChatMessage, { role: 'system' }>;
    // It paraphrased (lower case): the words stay, the mark and the note say not to rely on them.
    expect(summary.forgotten).toEqual({ at: AT, facts: 2 });
    expect(summary.content).toMatch(/deleted at their request on 2026-11-28; do not rely on what it says of them\.\)$/);
    // The summary of messages that quoted nothing is left alone.
    expect(first.messages[7]).toBe(summarised[7]);
    // A second deletion adds to the mark, without a second note.
    const again = forgetQuotes(first.messages, { at: AT, facts: [{ text: 'Their passport number is X123' }] });
    expect(again.changed).toBe(0);
    expect(again.messages).toBe(first.messages);
  });

  it('takes the fact out of the rest of a run: its tool results, its recalled block, its events', () => {
    const state = {
      ...startRun({ message: 'Book a seat.' }, []),
      messages,
      toolExecutions: [
        {
          id: 'c1',
          name: 'remember',
          arguments: { text: fact },
          result: JSON.stringify({ text: fact }),
          error: false,
          immediate: false,
        },
      ],
      recall: { text: `What you remember: - ${fact}`, after: 1 },
    } as RunState;
    const { state: out, changed } = forgetInRun(state, { at: AT, facts: [{ text: fact, ref: 'c1' }] });
    expect(changed).toBeGreaterThan(2);
    expect(JSON.stringify(out)).not.toContain('aisle seats');
    expect(out.recall).toEqual({ text: `What you remember: - ${FORGOTTEN_TEXT}`, after: 1 });
    // The messages are a new version for the worker's cache.
    expect(out.revision).toBe(1);
    // Nothing to take out: the same state, no new version.
    expect(forgetInRun(out, { at: AT, facts: [{ text: fact }] })).toEqual({ state: out, changed: 0 });

    const log = new EventLog();
    log.emit(1, {
      type: 'tool_call_finished',
      id: 'c1',
      name: 'remember',
      result: JSON.stringify({ text: fact }),
      error: false,
    });
    log.emit(1, { type: 'text_delta', call: 1, delta: 'Noted.' });
    expect(log.rewrite((e) => forgetInValue(e, { at: AT, facts: [{ text: fact }] }).value)).toBe(1);
    expect(JSON.stringify(log.snapshot())).not.toContain('aisle seats');
    expect(log.snapshot().events.map((e) => e.offset)).toEqual([0, 1]);
  });

  it('takes the fact out of a conversation and its running turn, as one new version of the messages', () => {
    const conv = {
      ...startConversation({ system: 'You help with travel.' }),
      messages: messages.slice(1),
      revisionsMade: 3,
    };
    const turn = {
      ...startRun({ message: 'Book it.' }, []),
      messages: [...messages, { role: 'user', content: 'Book it.' }],
    } as RunState;
    const out = forgetInConversation(conv, turn, { at: AT, facts: [{ text: fact, ref: 'c1' }] });
    expect(JSON.stringify([out.conv, out.run])).not.toContain('aisle seats');
    // Never a version a fork used before (revisionsMade), the same for both.
    expect(out.conv).toMatchObject({ revision: 4, revisionsMade: 4 });
    expect(out.run?.revision).toBe(4);
    expect(forgetInConversation(out.conv, out.run, { at: AT, facts: [{ text: fact }] }).changed).toBe(0);
  });

  it('leaves short facts alone, which would blank the same words used for other things', () => {
    const out = forgetQuotes([{ role: 'user', content: 'I like tea a lot' }], {
      at: AT,
      facts: [{ text: 'Likes tea' }],
    });
    expect(out.changed).toBe(0);
  });

  it('finds a fact in a recall result, where it is JSON-escaped', () => {
    const quoted = 'Says "no calls" before 9';
    const recalled: ChatMessage = {
      role: 'tool',
      tool_call_id: 'r1',
      content: JSON.stringify({ facts: [{ id: 'f9', text: quoted }] }),
    };
    const out = forgetQuotes([recalled], { at: AT, facts: [{ text: quoted }] });
    expect(out.changed).toBe(1);
    expect(JSON.parse((out.messages[0] as { content: string }).content)).toEqual({
      facts: [{ id: 'f9', text: FORGOTTEN_TEXT }],
    });
  });
});

it('memory list takes --limit from 1 to 1000, and says so', () => {
  expect(parseMemoryArgs(['list', '--user', 'u1', '--limit', '5'])).toMatchObject({ limit: 5 });
  for (const limit of ['0', '5000', 'x'])
    expect(() => parseMemoryArgs(['list', '--user', 'u1', '--limit', limit])).toThrow(
      /--limit must be a whole number from 1 to 1000/,
    );
});
