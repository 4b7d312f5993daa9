import { LiveTextMerge } from '../../src/core/events/live-text-merge';
import type { AgentEvent } from '../../src/core/events/agent-events';

/** The merge's output as a readable transcript: event types, with each text delta's text. */
function shown(events: AgentEvent[]): string[] {
  return events.map((e) =>
    e.type === 'text_delta' ? `text:${e.delta}` : e.type === 'model_retry' ? `retry:${e.attempt}` : e.type,
  );
}

let offset = 0;
const ev = (body: Record<string, unknown>, turn = 1): AgentEvent => ({ ...body, offset: offset++, turn }) as AgentEvent;

beforeEach(() => (offset = 0));

describe('LiveTextMerge', () => {
  it('shows live text at once after its call started, and only what the durable deltas add', () => {
    const m = new LiveTextMerge();
    const out: AgentEvent[] = [];
    out.push(...m.durable(ev({ type: 'turn_started', message: 'hi' })));
    out.push(...m.durable(ev({ type: 'model_call_started', call: 1, iteration: 1 })));
    out.push(...m.live({ call: 1, attempt: 1, at: 0, text: 'Hello ' }));
    out.push(...m.live({ call: 1, attempt: 1, at: 6, text: 'wor' }));
    // The durable batch overlaps what the live path showed: only its tail is new.
    out.push(...m.durable(ev({ type: 'text_delta', call: 1, delta: 'Hello world' })));
    out.push(...m.live({ call: 1, attempt: 1, at: 9, text: 'ld!' }));
    out.push(...m.durable(ev({ type: 'text_delta', call: 1, delta: '!' })));
    expect(shown(out)).toEqual(['turn_started', 'model_call_started', 'text:Hello ', 'text:wor', 'text:ld', 'text:!']);
    expect(
      out
        .filter((e) => e.type === 'text_delta')
        .map((e) => (e as { delta: string }).delta)
        .join(''),
    ).toBe('Hello world!');
  });

  it('keeps live text of a call the log has not started until it does, and asks for a read', () => {
    const m = new LiveTextMerge();
    expect(m.durable(ev({ type: 'turn_started', message: 'hi' }))).toHaveLength(1);
    expect(m.live({ call: 1, attempt: 1, at: 0, text: 'early' })).toEqual([]);
    expect(m.waiting).toBe(true);
    expect(shown(m.durable(ev({ type: 'model_call_started', call: 1, iteration: 1 })))).toEqual([
      'model_call_started',
      'text:early',
    ]);
    expect(m.waiting).toBe(false);
  });

  it('stops waiting for a call that started before the reader did: its text comes from the log', () => {
    const m = new LiveTextMerge();
    offset = 5; // the reader starts mid-answer: call 2 started before its first event
    m.startAt(5);
    expect(m.live({ call: 2, attempt: 1, at: 40, text: 'more ' })).toEqual([]);
    expect(m.waiting).toBe(true);
    // The log shows text of call 2, whose start this reader never saw: nothing waits for it any more.
    expect(shown(m.durable(ev({ type: 'text_delta', call: 2, delta: 'text ' })))).toEqual(['text:text ']);
    expect(m.waiting).toBe(false);
    expect(m.live({ call: 2, attempt: 1, at: 45, text: 'again' })).toEqual([]);
    expect(m.waiting).toBe(false);
    // A later call's start says the same of every earlier one; its own pieces are shown.
    expect(m.live({ call: 3, attempt: 1, at: 0, text: 'next' })).toEqual([]);
    expect(shown(m.durable(ev({ type: 'model_call_started', call: 3, iteration: 2 })))).toEqual([
      'model_call_started',
      'text:next',
    ]);
    expect(m.waiting).toBe(false);
    expect(m.live({ call: 2, attempt: 1, at: 50, text: 'late' })).toEqual([]);
    expect(m.waiting).toBe(false);
  });

  it('announces a later attempt from the live path once, and drops the stale attempt’s durable text', () => {
    const m = new LiveTextMerge();
    const out: AgentEvent[] = [];
    out.push(...m.durable(ev({ type: 'model_call_started', call: 1, iteration: 1 })));
    out.push(...m.live({ call: 1, attempt: 1, at: 0, text: 'lost ' }));
    out.push(...m.live({ call: 1, attempt: 2, at: 0, text: 'Fresh' }));
    out.push(...m.durable(ev({ type: 'text_delta', call: 1, delta: 'lost words' }))); // attempt 1's batch, late
    out.push(...m.durable(ev({ type: 'model_retry', call: 1, attempt: 2, error: 'worker lost' })));
    out.push(...m.durable(ev({ type: 'text_delta', call: 1, delta: 'Fresh start' })));
    expect(shown(out)).toEqual(['model_call_started', 'text:lost ', 'retry:2', 'text:Fresh', 'text: start']);
  });

  it('turns the live path off for a call whose streamed text the log voided', () => {
    const m = new LiveTextMerge();
    const out: AgentEvent[] = [];
    out.push(...m.durable(ev({ type: 'model_call_started', call: 1, iteration: 1 })));
    out.push(...m.live({ call: 1, attempt: 1, at: 0, text: 'draft' }));
    out.push(...m.durable(ev({ type: 'model_retry', call: 1, attempt: 1, error: 'not a beginning' })));
    out.push(...m.live({ call: 1, attempt: 1, at: 5, text: ' more' }));
    out.push(...m.durable(ev({ type: 'text_delta', call: 1, delta: 'Final' })));
    expect(shown(out)).toEqual(['model_call_started', 'text:draft', 'retry:1', 'text:Final']);
  });

  it('voids the streamed text of an attempt the live path announced when the log voids it', () => {
    // Attempt 2 streams "Final Answer…", then returns tool calls: the log announces attempt 2, then
    // voids its text with a second retry of the same attempt.
    const m = new LiveTextMerge();
    const out: AgentEvent[] = [];
    out.push(...m.durable(ev({ type: 'model_call_started', call: 1, iteration: 1 })));
    out.push(...m.live({ call: 1, attempt: 2, at: 0, text: 'Final Answer: 4' }));
    out.push(...m.durable(ev({ type: 'model_retry', call: 1, attempt: 2, error: 'worker lost' })));
    out.push(...m.durable(ev({ type: 'text_delta', call: 1, delta: 'Final Answer: 4' })));
    out.push(...m.durable(ev({ type: 'model_retry', call: 1, attempt: 2, error: 'not a beginning' })));
    out.push(...m.live({ call: 1, attempt: 2, at: 15, text: ' more' }));
    out.push(...m.durable(ev({ type: 'text_delta', call: 1, delta: 'Thought' })));
    expect(shown(out)).toEqual(['model_call_started', 'retry:2', 'text:Final Answer: 4', 'retry:2', 'text:Thought']);
  });

  it('keeps a joined-late live piece until the durable text reaches it', () => {
    const m = new LiveTextMerge();
    const out: AgentEvent[] = [];
    out.push(...m.durable(ev({ type: 'model_call_started', call: 1, iteration: 1 })));
    out.push(...m.live({ call: 1, attempt: 1, at: 10, text: 'KLM' }));
    out.push(...m.durable(ev({ type: 'text_delta', call: 1, delta: 'ABCDEFGHIJK' })));
    expect(shown(out)).toEqual(['model_call_started', 'text:ABCDEFGHIJK', 'text:LM']);
  });

  it('shows live events in offset order, once, whichever path brings them first', () => {
    const m = new LiveTextMerge();
    const a = ev({ type: 'turn_started', message: 'hi' });
    const b = ev({ type: 'model_call_started', call: 1, iteration: 1 });
    const c = ev({ type: 'text_delta', call: 1, delta: 'Hi' });
    expect(m.liveEvent(b)).toEqual([]); // where the reader starts is not known yet
    expect(m.waiting).toBe(true);
    expect(shown(m.startAt(0))).toEqual([]);
    expect(shown(m.liveEvent(a))).toEqual(['turn_started', 'model_call_started']);
    expect(shown(m.durable(a))).toEqual([]);
    expect(shown(m.durable(b))).toEqual([]);
    expect(shown(m.liveEvent(c))).toEqual(['text:Hi']);
    expect(shown(m.durable(c))).toEqual([]);
    expect(m.waiting).toBe(false);
  });

  it('follows the log when it starts further on than live events kept', () => {
    const m = new LiveTextMerge();
    const old = ev({ type: 'turn_started', message: 'earlier' });
    const start = ev({ type: 'turn_started', message: 'hi' }, 2);
    expect(m.liveEvent(old)).toEqual([]);
    expect(shown(m.durable(start))).toEqual(['turn_started']);
    expect(m.waiting).toBe(false);
  });

  it('goes on from any event’s position without showing text twice or losing any', () => {
    type Op = { durable: AgentEvent } | { live: { call: number; attempt: number; at: number; text: string } };
    const ops: Op[] = [
      { durable: ev({ type: 'turn_started', message: 'hi' }) },
      { durable: ev({ type: 'model_call_started', call: 1, iteration: 1 }) },
      { live: { call: 1, attempt: 1, at: 0, text: 'Hello ' } },
      { live: { call: 1, attempt: 1, at: 6, text: 'wor' } },
      { durable: ev({ type: 'text_delta', call: 1, delta: 'Hello world' }) },
      { live: { call: 1, attempt: 1, at: 11, text: '!' } },
      { live: { call: 1, attempt: 2, at: 0, text: 'Bye' } },
      { durable: ev({ type: 'text_delta', call: 1, delta: '!' }) },
      { durable: ev({ type: 'model_retry', call: 1, attempt: 2, error: 'x' }) },
      { live: { call: 1, attempt: 2, at: 3, text: ' now' } },
      { durable: ev({ type: 'text_delta', call: 1, delta: 'Bye now' }) },
      { live: { call: 1, attempt: 2, at: 7, text: '.' } },
      { durable: ev({ type: 'text_delta', call: 1, delta: '.' }) },
      { durable: ev({ type: 'turn_completed', result: {} }) },
    ];
    const feed = (m: LiveTextMerge, op: Op) => ('durable' in op ? m.durable(op.durable) : m.live(op.live));
    /** What a reader shows: the events other than text, and the text of the attempt shown last. */
    const screen = (events: AgentEvent[]) => {
      let text = '';
      const others: string[] = [];
      for (const e of events) {
        if (e.type === 'text_delta') text += e.delta;
        else if (e.type === 'model_retry') text = '';
        if (e.type !== 'text_delta') others.push(e.type);
      }
      return { text, others };
    };
    const whole = new LiveTextMerge();
    const all = ops.map((op) => feed(whole, op));
    expect(screen(all.flat())).toEqual({
      text: 'Bye now.',
      others: ['turn_started', 'model_call_started', 'model_retry', 'turn_completed'],
    });
    // Cut after each event shown; the reader comes back with its position and reads on.
    all.forEach((outputs, i) =>
      outputs.forEach((event, j) => {
        const seen = [...all.slice(0, i).flat(), ...outputs.slice(0, j + 1)];
        const back = LiveTextMerge.resume(whole.positionOf(event))!;
        expect(back.after).toBe(event.offset);
        // The durable log from its position on; live pieces only from those sent after it came back.
        const rest = ops.slice(i + 1);
        const again = 'durable' in ops[i] && ops[i].durable.offset > back.after ? [ops[i], ...rest] : rest;
        const resumed = again
          .filter((op) => !('durable' in op) || op.durable.offset > back.after)
          .flatMap((op) => feed(back.merge, op));
        expect(screen([...seen, ...resumed])).toEqual({
          text: 'Bye now.',
          others: ['turn_started', 'model_call_started', 'model_retry', 'turn_completed'],
        });
      }),
    );
    expect(LiveTextMerge.resume('x')).toBeUndefined();
    expect(LiveTextMerge.resume('3.1')).toBeUndefined();
  });
});
