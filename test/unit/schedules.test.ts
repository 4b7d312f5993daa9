import { cronProblem, scheduleRequestProblems } from '../../src/core/schedules/schedules';

/** Schedule requests are checked before Temporal sees them: each problem named, with its fix. */
describe('schedule requests', () => {
  const base = { scheduleId: 'daily-digest', message: 'digest' };

  it('take an interval or a cron expression, exactly one', () => {
    expect(scheduleRequestProblems({ ...base, every: '1h' })).toEqual([]);
    expect(scheduleRequestProblems({ ...base, cron: '0 8 * * 1-5' })).toEqual([]);
    expect(scheduleRequestProblems({ ...base })).toEqual([
      'give exactly one of "every" (e.g. "1h") and "cron" (e.g. "0 8 * * *")',
    ]);
    expect(cronProblem('every morning')).toMatch(/is not a cron expression: five fields/);
  });

  it('bound the jitter by the interval (a day with cron; a week, month or year for the keywords)', () => {
    expect(scheduleRequestProblems({ ...base, every: '1h', jitter: '5m' })).toEqual([]);
    expect(scheduleRequestProblems({ ...base, every: '1h', jitter: '1h' })).toEqual([]);
    expect(scheduleRequestProblems({ ...base, every: '1h', jitter: '99999999d' })).toEqual([
      '"jitter" must be at most the interval ("1h"), got "99999999d"',
    ]);
    expect(scheduleRequestProblems({ ...base, cron: '0 8 * * *', jitter: '2d' })).toEqual([
      '"jitter" must be at most a day with "cron", got "2d"',
    ]);
    expect(scheduleRequestProblems({ ...base, cron: '@weekly', jitter: '2d' })).toEqual([]);
    expect(scheduleRequestProblems({ ...base, every: '1h', jitter: 'soon' })[0]).toMatch(/jitter/);
  });
});
