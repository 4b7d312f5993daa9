import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineAgent } from '../../src/agents/define-agent';
import { runOutcome, startAgentRun } from '../../src/client/run-agent';
import { decideApproval, readStatus } from '../../src/client/workflow-controls';
import { freePort } from '../../src/connection/dev-server';
import { ToolRegistry } from '../../src/tools/registry';
import { cleanEnv, ROOT, startTs, type Started, nodeArgs } from '../helpers/processes';
import { answer, call, startModel, toolResults } from '../helpers/scripted-model';
import { createTestWorker, useTestTemporal } from '../helpers/temporal';

/**
 * A remote MCP server behind OAuth: `durable-agents mcp login` logs in once (a link, a loopback
 * redirect), the workers' token file keeps the login, and a worker's run calls the server's tool
 * with it.
 */
const temporal = useTestTemporal();

it.each([
  { revision: '2025-11-25', mode: 'legacy', note: 'the vault code is 1234' },
  { revision: '2026-07-28 only', mode: 'modern', note: 'the vault code is 1234 (2026-07-28)' },
])(
  'logs in to an OAuth MCP server ($revision) with `mcp login`, and a worker calls its tool with the stored login',
  async ({ mode, note }) => {
    // Each case its own tenant: a tenant's budget ledger is a workflow on the task queue of the
    // worker that first met it, which the other case has stopped.
    const tenant = `acme-${mode}`;
    const [mcpPort, authPort] = [await freePort(), await freePort()];
    const vault: Started = await startTs(
      ['test/fixtures/oauth-mcp-server.ts', String(mcpPort), String(authPort), mode],
      cleanEnv(),
      /^ready /m,
    );
    let stopWorker: () => Promise<void> = async () => undefined;
    const dir = mkdtempSync(join(tmpdir(), 'mcp-oauth-'));
    const config = join(dir, 'mcp.json');
    const tokens = join(dir, 'tokens.json');
    writeFileSync(
      config,
      JSON.stringify({ mcpServers: { vault: { url: `http://localhost:${mcpPort}/mcp`, oauth: {} } } }),
    );
    try {
      // A worker with the MCP configuration and the (empty) token file: without a login, a run that
      // needs the server fails saying how to log in.
      const m = await startModel((req) =>
        toolResults(req).length ? answer(toolResults(req)[0]) : call(['vault__secret_note', {}]),
      );
      const t = temporal();
      const { worker, taskQueue } = await createTestWorker(t, {
        baseURL: m.baseURL,
        registry: new ToolRegistry(),
        agents: [defineAgent({ name: 'vault_reader', instructions: 'Read it.', tools: [], mcpServers: ['vault'] })],
        mcpServers: JSON.parse(readFileSync(config, 'utf8')).mcpServers,
        mcpTokenFile: tokens,
      });
      const running = worker.run();
      stopWorker = async () => {
        worker.shutdown();
        await running;
      };
      const before = await runOutcome(
        await startAgentRun(t.client, { agent: 'vault_reader', message: 'the note?' }, { taskQueue }),
      );
      expect(before).toMatchObject({
        status: 'failed',
        error: expect.stringMatching(/needs a login: run `durable-agents mcp login vault`/),
      });
      const login = spawn(process.execPath, nodeArgs(['client.ts', 'mcp', 'login', 'vault']), {
        cwd: ROOT,
        env: cleanEnv({ AGENT_MCP_CONFIG: config, AGENT_MCP_TOKENS: tokens }),
      });
      let said = '';
      login.stderr.on('data', (d) => (said += d));
      login.stdout.on('data', (d) => (said += d));
      const link = await new Promise<string>((resolve, reject) => {
        const look = () => {
          const m = /Open this link to log in to "vault".*:\n\n {2}(\S+)/.exec(said);
          if (m) resolve(m[1]);
        };
        login.stderr.on('data', look);
        login.once('exit', (code) => reject(new Error(`mcp login exited with ${code}: ${said}`)));
      });
      expect(new URL(link).searchParams.get('code_challenge_method')).toBe('S256');
      // The person's browser: the authorization server redirects to the loopback callback.
      const authorized = await fetch(link, { redirect: 'manual' });
      const callback = authorized.headers.get('location')!;
      expect(callback).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback\?code=/);
      expect(await (await fetch(callback)).text()).toMatch(/^Logged in/);
      const code = await new Promise<number | null>((resolve) => login.once('exit', resolve));
      expect([code, said]).toEqual([0, expect.stringContaining('Logged in to "vault": 1 tools. The login is in')]);
      // The token file: only its owner reads it.
      expect(statSync(tokens).mode & 0o777).toBe(0o600);
      expect(Object.keys(JSON.parse(readFileSync(tokens, 'utf8')))).toEqual([`http://localhost:${mcpPort}/mcp`]);

      // The same worker, after the login: the run calls the tool.
      {
        const handle = await startAgentRun(t.client, { agent: 'vault_reader', message: 'the note?' }, { taskQueue });
        const outcome = await runOutcome(handle);
        expect(outcome).toMatchObject({ status: 'completed', content: note });
        // The token is in no history: the run's workflow history never holds it.
        // (Payloads as their text: the history's bytes decoded.)
        const history = JSON.stringify(
          await t.client.workflow.getHandle(handle.workflowId).fetchHistory(),
          (_: string, v: unknown) =>
            v instanceof Uint8Array
              ? Buffer.from(v).toString('utf8')
              : typeof v === 'string' && _ === 'data'
                ? Buffer.from(v, 'base64').toString('utf8')
                : v,
        );
        expect(history).toContain(note);
        const stored = JSON.parse(readFileSync(tokens, 'utf8'))[`http://localhost:${mcpPort}/mcp`];
        expect(history).not.toContain(stored.tokens.access_token);
      }

      // A tenant's run uses its tenant's login, never the default one: without one, it asks a person
      // in the run to log in for the tenant, and goes on once they approve.
      const tenantRun = await startAgentRun(
        t.client,
        { agent: 'vault_reader', message: 'the note?', tenant },
        { taskQueue },
      );
      let pending: { callId: string; question?: string } | undefined;
      for (const deadline = Date.now() + 60_000; !pending && Date.now() < deadline;) {
        const status = (await readStatus(t.client, tenantRun.workflowId)) as {
          pendingApprovals?: { callId: string; question?: string }[];
        };
        pending = status.pendingApprovals?.[0];
        if (!pending) await new Promise((r) => setTimeout(r, 200));
      }
      expect(pending?.question).toMatch(
        new RegExp(`needs a login: run \`durable-agents mcp login vault --tenant ${tenant}\``),
      );
      const acme = spawn(process.execPath, nodeArgs(['client.ts', 'mcp', 'login', 'vault', '--tenant', tenant]), {
        cwd: ROOT,
        env: cleanEnv({ AGENT_MCP_CONFIG: config, AGENT_MCP_TOKENS: tokens }),
      });
      let acmeSaid = '';
      acme.stderr.on('data', (d) => (acmeSaid += d));
      acme.stdout.on('data', (d) => (acmeSaid += d));
      const acmeLink = await new Promise<string>((resolve, reject) => {
        acme.stderr.on('data', () => {
          const m = new RegExp(`Open this link to log in to "vault".* for tenant "${tenant}":\n\n {2}(\\S+)`).exec(
            acmeSaid,
          );
          if (m) resolve(m[1]);
        });
        acme.once('exit', (code) => reject(new Error(`mcp login --tenant exited with ${code}: ${acmeSaid}`)));
      });
      const acmeCallback = (await fetch(acmeLink, { redirect: 'manual' })).headers.get('location')!;
      expect(await (await fetch(acmeCallback)).text()).toMatch(/^Logged in/);
      expect(await new Promise<number | null>((resolve) => acme.once('exit', resolve))).toBe(0);
      expect(acmeSaid).toContain(`Runs of tenant "${tenant}" use this login`);
      expect(Object.keys(JSON.parse(readFileSync(tokens, 'utf8'))).sort()).toEqual([
        `http://localhost:${mcpPort}/mcp`,
        `http://localhost:${mcpPort}/mcp#tenant=${tenant}`,
      ]);
      await decideApproval(t.client, tenantRun.workflowId, { callId: pending!.callId, approve: true });
      expect(await runOutcome(tenantRun)).toMatchObject({ status: 'completed', content: note });
    } finally {
      await stopWorker();
      vault.kill('SIGKILL');
      await vault.exited;
    }
  },
  180_000,
);
