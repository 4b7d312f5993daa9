import { onInterrupt } from '../../src/cli/interrupt';

/** Ctrl+C handling of the CLI: one press delivered twice counts once; separate presses count. */
describe('onInterrupt', () => {
  let now = 1_000_000;
  beforeEach(() => jest.spyOn(Date, 'now').mockImplementation(() => now));
  afterEach(() => jest.restoreAllMocks());

  const press = (atMs: number) => {
    now = atMs;
    process.emit('SIGINT', 'SIGINT');
  };

  it('counts a copy relayed within 100 ms once, and a press 200 ms later again', () => {
    const handler = jest.fn();
    const off = onInterrupt(handler);
    try {
      press(1_000_000);
      press(1_000_035); // tsx's relayed copy
      expect(handler).toHaveBeenCalledTimes(1);
      press(1_000_200); // the next press: a chat turn cancelled this fast is back at the prompt
      expect(handler).toHaveBeenCalledTimes(2);
    } finally {
      off();
    }
  });

  it('stops listening once turned off', () => {
    const handler = jest.fn();
    const before = process.listenerCount('SIGINT');
    onInterrupt(handler)();
    expect(process.listenerCount('SIGINT')).toBe(before);
  });
});
