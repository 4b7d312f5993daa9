import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

/**
 * examples/fleet (the production topology as a compose file) stays true to what it starts: the
 * settings each process needs, the commands and files it names, a proxy that lets streams through.
 * (No container engine runs in the tests; the topology itself is tested in e2e/live-fleet.test.ts.)
 */
const ROOT = join(__dirname, '..', '..');
const FLEET = join(ROOT, 'examples', 'fleet');
const compose = parse(readFileSync(join(FLEET, 'compose.yaml'), 'utf8'), { merge: true }) as {
  services: Record<
    string,
    { command?: string[]; environment?: Record<string, string>; deploy?: { replicas?: number } }
  >;
};

it('runs two API replicas without workers and two workers, every one with the fleet’s settings', () => {
  const { api, worker } = compose.services;
  expect([api.deploy?.replicas, worker.deploy?.replicas]).toEqual([2, 2]);
  expect(api.command).toEqual(expect.arrayContaining(['serve', '--no-worker', '--host', '0.0.0.0']));
  expect(api.environment?.AGENT_HTTP_TOKENS).toMatch(/AGENT_HTTP_TOKENS/);
  const queue = /export const TASK_QUEUE = '([^']+)'/.exec(
    readFileSync(join(ROOT, 'examples', 'support-agent', 'src', 'agent.ts'), 'utf8'),
  )?.[1];
  for (const service of [api, worker])
    expect(service.environment).toMatchObject({
      TEMPORAL_ADDRESS: 'temporal:7233',
      AGENT_TASK_QUEUE: queue,
      AGENT_LIVE_URL: 'redis://redis:6379',
      AGENT_MEMORY_URL: expect.stringMatching(/^postgres:\/\/.*@postgres:5432\//),
      AGENT_BLOB_DIR: '/blobs',
    });
  expect(worker.command).toEqual(['node', 'dist/worker.js']);
  expect(existsSync(join(ROOT, 'examples', 'support-agent', 'src', 'worker.ts'))).toBe(true);
  expect(Object.keys(compose.services).sort()).toEqual(['api', 'postgres', 'proxy', 'redis', 'temporal', 'worker']);
});

it('builds from files that exist, and proxies streams unbuffered and long', () => {
  const dockerfile = readFileSync(join(FLEET, 'Dockerfile'), 'utf8');
  for (const [, from] of dockerfile.matchAll(/^COPY (?!durable-agents)(.+) \S+$/gm))
    for (const path of from.split(' ')) expect(existsSync(join(ROOT, path))).toBe(true);
  const nginx = readFileSync(join(FLEET, 'nginx.conf'), 'utf8');
  expect(nginx).toMatch(/server api:8080/);
  expect(nginx).toMatch(/proxy_buffering off;/);
  expect(nginx).toMatch(/proxy_read_timeout 1h;/);
});
