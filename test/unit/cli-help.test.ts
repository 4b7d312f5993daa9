import { commandHelp, HELP_COMMANDS, overviewHelp, usageOf, wantsHelp } from '../../src/cli/help';
import { RUN_OPTION_FLAGS } from '../../src/cli/option-flags';
import { COMMANDS } from '../../src/cli/commands';

describe('the command line help', () => {
  it('is short, and lists every command with a page of its own', () => {
    const overview = overviewHelp();
    // 27 commands in 6 groups, the usage line and the footer: one screen.
    expect(overview.split('\n').length).toBeLessThanOrEqual(51);
    // The servers and the worker are commands of the one CLI, from the one table.
    expect(HELP_COMMANDS).toEqual(COMMANDS.map((c) => c.name));
    for (const command of ['serve', 'worker', 'mcp', 'a2a', 'codec-server']) expect(HELP_COMMANDS).toContain(command);
    for (const command of HELP_COMMANDS) {
      expect(overview).toMatch(new RegExp(`^  ${command}\\b`, 'm'));
      expect(commandHelp(command)).toMatch(new RegExp(`^\\S+ ${command}: .+\\n\\nusage: \\S+ ${command}\\b`));
    }
    for (const command of [
      'chat',
      'send',
      'history',
      'status',
      'cancel',
      'end',
      'approve',
      'reject',
      'agents',
      'list',
    ]) {
      expect(HELP_COMMANDS).toContain(command);
    }
    // Every command main dispatches has its page (help eval printed nothing once).
    for (const command of ['schedule', 'event', 'replay', 'eval', 'rerun', 'mcp', 'codec-server'])
      expect(commandHelp(command)).toMatch(new RegExp(`^\\S+ ${command}: `));
    expect(commandHelp('nope')).toBeUndefined();
  });

  it('documents every run option on the pages of run, chat and send', () => {
    for (const command of ['run', 'chat', 'send']) {
      const page = commandHelp(command)!;
      for (const flag of Object.keys(RUN_OPTION_FLAGS)) expect(page).toContain(`--${flag}`);
      expect(page).toContain('--task-queue NAME');
    }
    expect(commandHelp('chat')).toContain('--idle-timeout');
    expect(commandHelp('install-temporal')).not.toContain('--task-queue');
  });

  it('gives a usage error the usage of its command and where the page is', () => {
    expect(usageOf('reject')).toMatch(
      /^usage: \S+ reject <id> <callId> \[--reason "\.\.\."\] \[--json\]\n\(\S+ help reject for more\)$/,
    );
    expect(usageOf('frob')).toMatch(/^usage: \S+ <command> \[options\]\n\(\S+ help for more\)$/);
  });

  it('takes --help and -h before --, not after', () => {
    expect(wantsHelp(['x', '--help'])).toBe(true);
    expect(wantsHelp(['-h'])).toBe(true);
    expect(wantsHelp(['--', '--help'])).toBe(false);
  });
});
