import { spawnSync } from 'node:child_process';

/**
 * Why the bubblewrap sandbox cannot run here, or undefined. Outside CI a machine without it skips
 * the tests that run commands in it, with one line; in CI it is a failure (CI installs it with
 * `npm run setup:sandbox`).
 */
export function sandboxProblem(): string | undefined {
  const check = spawnSync('bwrap', ['--unshare-all', '--ro-bind', '/', '/', '/bin/true'], { encoding: 'utf8' });
  const problem =
    check.error || check.status !== 0
      ? `bubblewrap cannot make a sandbox here (${check.error?.message ?? check.stderr.trim()}): npm run setup:sandbox`
      : undefined;
  if (problem && process.env.CI) throw new Error(`the sandbox tests cannot run in CI: ${problem}`);
  return problem;
}

/** `it`, or `it.skip` (said once) when the sandbox cannot run here. */
export function itInSandbox(file: string): jest.It {
  const problem = sandboxProblem();
  if (!problem) return it;
  console.log(`${file}: the tests that run commands in the sandbox are skipped: ${problem}`);
  return it.skip;
}
