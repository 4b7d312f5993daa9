import { busyAction, busyPolicyProblem, withSteering } from '../../src/core/conversation/busy';
import type { RunState } from '../../src/core/state/run-state';

describe('busy policies', () => {
  it('queue a message when nothing runs, whatever the policy', () => {
    for (const policy of ['enqueue', 'reject', 'interrupt', 'steer'] as const)
      expect(busyAction(policy, undefined, 0)).toEqual({ kind: 'queue' });
  });

  it('decide by the policy while a turn runs', () => {
    expect(busyAction(undefined, 3, 0)).toEqual({ kind: 'queue' });
    expect(busyAction('interrupt', 3, 1)).toEqual({ kind: 'interrupt', turn: 3 });
    expect(busyAction('steer', 3, 0)).toEqual({ kind: 'steer', turn: 3 });
    expect(busyAction('reject', 3, 2)).toEqual({
      kind: 'refuse',
      problem:
        'the conversation is busy: turn 3 is running and 2 messages wait; send it again when the turn ends, or with "busy": "enqueue", "interrupt" or "steer"',
    });
    // Messages waiting, no turn running (between turns): only reject refuses; the others queue.
    expect(busyAction('reject', undefined, 1)).toMatchObject({ kind: 'refuse' });
    expect(busyAction('steer', undefined, 1)).toEqual({ kind: 'queue' });
  });

  it('names the policies when given another', () => {
    expect(busyPolicyProblem('later')).toBe('"busy" must be one of enqueue, reject, interrupt, steer, not "later"');
    expect(busyPolicyProblem(undefined)).toBeUndefined();
  });

  it('adds steering messages as the person’s words, marked', () => {
    const state = { messages: [{ role: 'user', content: 'hi' }] } as unknown as RunState;
    expect(withSteering(state, ['and cats']).messages).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'user', content: 'and cats', steered: true },
    ]);
    expect(withSteering(state, [])).toBe(state);
  });
});
