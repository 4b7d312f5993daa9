import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CredentialStore } from '../../src/tools/credential-store';
import { cleanEnv, nodeArgs, ROOT } from '../helpers/processes';

/**
 * `credentials set` run many times at once, as a deploy script that sets each tenant's keys in
 * parallel does: every secret lands (they were read, changed and written over each other).
 */
/** Runs the CLI with `stdin` as its input; resolves with its exit code and stderr. */
function cli(args: string[], env: NodeJS.ProcessEnv, stdin: string): Promise<[number | null, string]> {
  const child = spawn(process.execPath, nodeArgs(['client.ts', ...args]), { cwd: ROOT, env });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  child.stdin.end(stdin);
  return new Promise((resolve) => child.on('close', (code) => resolve([code, stderr])));
}

it('keeps every secret that parallel credentials set commands write', async () => {
  const file = join(mkdtempSync(join(tmpdir(), 'credentials-')), 'credentials.json');
  const env = cleanEnv({ AGENT_CREDENTIALS: file });
  const names = Array.from({ length: 8 }, (_, i) => `key_${i}`);
  const done = await Promise.all(
    names.map((name, i) => cli(['credentials', 'set', name, ...(i % 2 ? ['--tenant', 'acme'] : [])], env, `s-${name}`)),
  );
  for (const [code, stderr] of done) expect([code, stderr]).toEqual([0, expect.any(String)]);
  const store = new CredentialStore(file);
  for (const [i, name] of names.entries())
    expect([name, await store.get(name, i % 2 ? 'acme' : undefined)]).toEqual([name, `s-${name}`]);
  // And in one process, sets at once all land too (they queue for the file's lock).
  const here = new CredentialStore(file);
  await Promise.all(Array.from({ length: 40 }, (_, i) => here.set(`many_${i}`, `v${i}`)));
  expect(await here.names()).toHaveLength(40 + names.length / 2);
  expect(readFileSync(file, 'utf8')).not.toMatch(/\.lock/);
});
