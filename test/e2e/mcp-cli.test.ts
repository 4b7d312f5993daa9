import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cleanEnv, ROOT, runTs, devServerPort, nodeArgs } from '../helpers/processes';
import { answer, call, closeScriptedModels, startModel, toolResults } from '../helpers/scripted-model';

/** MCP from the command line: AGENT_MCP_CONFIG gives the CLI's (and `npm start`'s) worker MCP tools. */

afterEach(closeScriptedModels);

function mcpConfig(servers: Record<string, unknown>): string {
  const file = join(mkdtempSync(join(tmpdir(), 'mcp-cli-')), 'mcp.json');
  writeFileSync(file, JSON.stringify({ mcpServers: servers }));
  return file;
}

describe('AGENT_MCP_CONFIG', () => {
  it('gives the CLI tools of the MCP servers it names, as <server>__<tool>', async () => {
    const model = await startModel((req) =>
      req.messages.some((m) => m.role === 'tool')
        ? answer(`got ${toolResults(req)[0]}`)
        : call(['test__echo', { text: 'from the cli' }]),
    );
    const config = mcpConfig({
      test: {
        command: process.execPath,
        args: nodeArgs([join(ROOT, 'test', 'helpers', 'mcp-test-server.ts'), '--stdio']),
        cwd: ROOT,
      },
    });
    const env = cleanEnv({
      AGENT_MCP_CONFIG: config,
      OPENAI_BASE_URL: model.baseURL,
      OPENAI_API_KEY: 'e2e',
      AGENT_DEV_SERVER_PORT: String(await devServerPort()),
      AGENT_DEV_SERVER_DB: `/tmp/durable-agents-mcp-${randomUUID()}.db`,
    });
    const r = await runTs(['client.ts', 'run', 'echo something', '--tools', 'test__echo', '--json'], env, 120_000);
    expect(r.stderr).not.toMatch(/error/i);
    expect(JSON.parse(r.stdout)).toMatchObject({
      status: 'completed',
      content: 'got echo: from the cli',
      toolExecutions: [{ name: 'test__echo', result: 'echo: from the cli' }],
    });
    expect(r.code).toBe(0);
  });

  it('prints a 4 MB tool output whole through a pipe: run, status and history with --json', async () => {
    const bytes = 4_000_000;
    const model = await startModel((req) =>
      req.messages.some((m) => m.role === 'tool') ? answer('read it') : call(['test__big', { bytes }]),
    );
    const env = cleanEnv({
      AGENT_MCP_CONFIG: mcpConfig({
        test: {
          command: process.execPath,
          args: nodeArgs([join(ROOT, 'test', 'helpers', 'mcp-test-server.ts'), '--stdio']),
          cwd: ROOT,
        },
      }),
      OPENAI_BASE_URL: model.baseURL,
      OPENAI_API_KEY: 'e2e',
      AGENT_DEV_SERVER_PORT: String(await devServerPort()),
      AGENT_DEV_SERVER_DB: `/tmp/durable-agents-mcp-${randomUUID()}.db`,
    });
    const id = `big-${randomUUID()}`;
    // runTs reads the command's stdout through a pipe, as `| jq` would.
    const run = await runTs(
      ['client.ts', 'run', 'read it', '--tools', 'test__big', '--id', id, '--json'],
      env,
      120_000,
    );
    expect(run.code).toBe(0);
    const outcome = JSON.parse(run.stdout);
    expect(outcome).toMatchObject({ status: 'completed', toolExecutions: [{ name: 'test__big' }] });
    expect(outcome.toolExecutions[0].result.length).toBe(bytes);
    const status = await runTs(['client.ts', 'status', id, '--json'], env, 120_000);
    expect(JSON.parse(status.stdout)).toMatchObject({ state: 'completed', toolExecutionCount: 1 });
    const history = await runTs(['client.ts', 'history', id, '--json'], env, 120_000);
    // The transcript holds what the model saw of it (its head and tail), in one whole JSON object.
    const tool = JSON.parse(history.stdout).messages.find((m: { role: string }) => m.role === 'tool');
    expect(tool.content.endsWith(' end')).toBe(true);
  });

  it('reports a broken configuration before doing anything', async () => {
    const config = mcpConfig({ files: { url: 'http://x/mcp', headers: { Authorization: 'Bearer ${NOPE}' } } });
    const r = await runTs(
      ['client.ts', 'run', 'hi'],
      cleanEnv({ AGENT_MCP_CONFIG: config, TEMPORAL_ADDRESS: '127.0.0.1:1' }),
    );
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `${config}: mcpServers.files.headers.Authorization uses \${NOPE}, which is not set in the environment`,
    );
  });
});
