import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startDevServer } from '../../src/connection/dev-server';
import { connectTemporal, temporalUiAt } from '../../src/connection/temporal-env';
import { clientSettings, uiPortFromEnv } from '../../src/connection/settings';
import { findTemporalCli } from '../../src/connection/temporal-cli';
import { cleanEnv, eventually, listening, runTs, startInteractive, startTs, devServerPort } from '../helpers/processes';
import { answer, call, closeScriptedModels, lastOf, startModel } from '../helpers/scripted-model';

/**
 * The default path, with no TEMPORAL_ADDRESS: each command starts (or reuses) the embedded dev
 * server and runs a worker in its own process. Ctrl+C is a SIGINT to the process group, as a
 * terminal sends it.
 */

afterEach(closeScriptedModels);

/** A model that takes its time on "slow ..." messages, calls add on "add A and B", and echoes the rest. */
async function model() {
  return startModel(async (req) => {
    const user = lastOf(req, 'user');
    const last = req.messages[req.messages.length - 1];
    // A slow model: Ctrl+C lands while its call is under way.
    if (user.startsWith('slow') && last.role === 'user') await new Promise((r) => setTimeout(r, 3_000));
    const add = /^add (\d+) and (\d+)$/.exec(user);
    if (add && last.role === 'user') return call(['add', { a: Number(add[1]), b: Number(add[2]) }]);
    if (last.role === 'tool') return answer(`the result is ${last.content}`);
    return answer(`you said: ${user}`);
  });
}

/** The environment of a user with no Temporal configured: a dev server port and database of this test's own. */
async function embeddedEnv(baseURL: string): Promise<{ env: NodeJS.ProcessEnv; port: number; db: string }> {
  const port = await devServerPort();
  const db = `/tmp/durable-agents-embedded-${randomUUID()}.db`;
  return {
    port,
    db,
    env: cleanEnv({
      AGENT_DEV_SERVER_PORT: String(port),
      AGENT_DEV_SERVER_DB: db,
      OPENAI_BASE_URL: baseURL,
      OPENAI_API_KEY: 'e2e',
    }),
  };
}

describe('Ctrl+C with the embedded server', () => {
  it('chat: cancels the running turn and returns to the prompt, whatever copy of the press comes late; at the prompt two presses leave, stopping the server it started', async () => {
    const llm = await model();
    const { env, port } = await embeddedEnv(llm.baseURL);
    const chat = startInteractive(['client.ts', 'chat'], env);
    await chat.waitFor(/you> $/);
    chat.write('slow question');
    await chat.waitFor(/… model call 1/);
    chat.interrupt();
    await chat.waitFor(/agent> \(turn cancelled\)\nyou> $/);
    // The same press again, late (npm relays a terminal's Ctrl+C; on a busy machine its copy can
    // come after the turn has ended): the session goes on.
    await new Promise((r) => setTimeout(r, 300));
    chat.interrupt();
    chat.write('still there?');
    await chat.waitFor(/agent> you said: still there\?\nyou> $/);
    // At the prompt: one press says how to leave, a second leaves.
    chat.interrupt();
    await chat.waitFor(/press Ctrl\+C again, or Ctrl\+D, or type \/quit/);
    // A second press a moment later, as a person makes it.
    await new Promise((r) => setTimeout(r, 300));
    chat.interrupt();
    const done = await chat.exitedWithin(30_000);
    expect(`${chat.output()}exit ${done.code}`).toMatch(/exit 0$/);
    expect(chat.output()).not.toMatch(/Promise did not resolve|Channel has been shut down|Error:/);
    expect(await eventually(async () => !(await listening(port)), 15_000)).toBe(true);
  });

  it('run: says the run is saved and how to follow it, exits 130; the id is then refused as running, with its own cause', async () => {
    const llm = await model();
    const { env, port, db } = await embeddedEnv(llm.baseURL);
    const id = `embedded-${randomUUID()}`;
    const run = startInteractive(['client.ts', 'run', 'add 2 and 3', '--needs-approval', 'add', '--id', id], env);
    await run.waitFor(/awaiting approval: add\(a=2, b=3\)/);
    run.interrupt();
    const stopped = await run.exited;
    expect(`${stopped.stderr}exit ${stopped.code}`).toMatch(/exit 130$/);
    expect(stopped.stderr).toContain(
      `Stopped waiting. This command started the dev server, which stops with it: the run ${id} is saved in ${db} and goes on when the server and a worker run again (npm start). Then: client.ts status ${id}`,
    );
    expect(await eventually(async () => !(await listening(port)), 15_000)).toBe(true);

    // The run is still open in the saved server state: starting the same id again is refused.
    const again = await runTs(['client.ts', 'run', 'add 1 and 1', '--id', id], env);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain(`client.ts: a run with id "${id}" is already running`);
    expect(again.stderr).not.toMatch(/Cannot close connection|Workers hold a reference/);
    const send = await runTs(['client.ts', 'send', id, 'hello', '--json'], env);
    expect(send.code).toBe(2);
    expect(JSON.parse(send.stdout)).toEqual({
      error: `"${id}" is a one-shot run, not a conversation`,
      errorType: 'Client.WrongKind',
    });
    expect(await eventually(async () => !(await listening(port)), 15_000)).toBe(true);
  });
});

describe('the embedded dev server belongs to the process that started it', () => {
  it('stops when its owner is killed outright (SIGKILL), and a server that is reused is announced as such', async () => {
    const llm = await model();
    const { env, port } = await embeddedEnv(llm.baseURL);
    const owner = await startTs(['worker.ts'], env, /Press Ctrl\+C/);
    expect(owner.output()).toContain(`Temporal: started an embedded dev server at 127.0.0.1:${port}`);
    const second = await startTs(['worker.ts'], env, /Press Ctrl\+C/);
    expect(second.output()).toContain(
      `Temporal: reusing the dev server already running at 127.0.0.1:${port} (started by another process; it keeps running when this one stops).`,
    );
    // Its Web UI answers at port + 1000, so the link is given.
    expect(second.output()).toContain(`Temporal Web UI: http://localhost:${port + 1000}/namespaces/default/workflows`);
    // A command using the running server says nothing about it: that is the usual case, not news.
    const listed = await runTs(['client.ts', 'list'], env);
    expect({ code: listed.code, stderr: listed.stderr }).toEqual({ code: 0, stderr: '' });
    second.kill('SIGTERM');
    await second.exited;
    expect(await listening(port)).toBe(true);

    owner.kill('SIGKILL'); // no handler runs: only the closed pipe tells the guardian
    await owner.exited;
    expect(await eventually(async () => !(await listening(port)), 20_000)).toBe(true);
  });
});

describe("a program of the user's that called connectTemporal()", () => {
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    it(`stops on one ${signal}: a worker as the README shows it (its dev server with it), and the HTTP API in a server of its own`, async () => {
      const { env, port } = await embeddedEnv('http://127.0.0.1:9/v1');
      const worker = await startTs(['test/fixtures/signal-worker.ts'], env, /worker ready/);
      const api = await startTs(
        ['test/fixtures/signal-http.ts'],
        { ...env, PORT: String(await freePort()) },
        /API listening/,
      );
      try {
        api.kill(signal);
        expect(await Promise.race([api.exited.then(() => 'exited'), sleep(10_000, 'still running')])).toBe('exited');
        worker.kill(signal);
        expect(await Promise.race([worker.exited.then(() => 'exited'), sleep(15_000, 'still running')])).toBe('exited');
        expect(await eventually(async () => !(await listening(port)), 15_000)).toBe(true);
      } finally {
        api.kill('SIGKILL');
        worker.kill('SIGKILL');
      }
    });
});

const sleep = <T>(ms: number, value: T) => new Promise<T>((r) => setTimeout(() => r(value), ms).unref());

describe('starting the embedded dev server', () => {
  it('puts the Web UI on TEMPORAL_UI_PORT, and links the UI of a server started elsewhere only where one answers', async () => {
    const port = await devServerPort();
    const uiPort = await freePort();
    const env = (extra: Record<string, string> = {}) =>
      clientSettings(
        cleanEnv({ AGENT_DEV_SERVER_PORT: String(port), AGENT_DEV_SERVER_DB: `/tmp/ui-${randomUUID()}.db`, ...extra }),
      );
    const lines: string[] = [];
    const ours = await connectTemporal(
      { announce: (line) => lines.push(line) },
      env({ TEMPORAL_UI_PORT: String(uiPort) }),
    );
    try {
      expect(ours.uiUrl).toBe(`http://localhost:${uiPort}`);
      expect(await temporalUiAt(uiPort)).toBe(`http://localhost:${uiPort}`);
      expect(lines).toContain(`Temporal Web UI: http://localhost:${uiPort}/namespaces/default/workflows`);
      // Another program finds the server; its UI is not at port + 1000, so no link is guessed...
      const guess = await connectTemporal({ announce: false }, env());
      expect(guess.mode).toBe('embedded-reused');
      expect(guess.uiUrl).toBeUndefined();
      await guess.close();
      // ...unless it is told where the UI is.
      const told = await connectTemporal({ announce: false }, env({ TEMPORAL_UI_PORT: String(uiPort) }));
      expect(told.uiUrl).toBe(`http://localhost:${uiPort}`);
      await told.close();
    } finally {
      await ours.close();
    }
    expect(() => uiPortFromEnv({ TEMPORAL_UI_PORT: 'eighty' })).toThrow(
      'TEMPORAL_UI_PORT must be a port number (1-65535), got "eighty"',
    );
  });

  it('tries again when the server exits at start-up because one of its ports was taken', async () => {
    // A CLI whose first start fails as the real one does when an internal port is taken.
    const dir = mkdtempSync(join(tmpdir(), 'fake-cli-'));
    const cli = join(dir, 'temporal');
    const marker = join(dir, 'started-once');
    writeFileSync(
      cli,
      `#!/bin/sh\nif [ ! -e ${marker} ]; then touch ${marker}; echo 'level=ERROR msg="Failed to start gRPC listener" error="listen tcp 127.0.0.1:1: bind: address already in use"'; exit 2; fi\nexec ${JSON.stringify(findTemporalCli(process.env))} "$@"\n`,
    );
    chmodSync(cli, 0o755);
    const logFile = join(dir, 'dev-server.log');
    const server = await startDevServer({ logFile }, { ...process.env, TEMPORAL_CLI_PATH: cli });
    try {
      expect(readFileSync(logFile, 'utf8')).toContain('address already in use');
      expect(await listening(Number(server.address.split(':')[1]))).toBe(true);
    } finally {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("gives up with the server's own reason when every attempt fails", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fake-cli-'));
    const cli = join(dir, 'temporal');
    writeFileSync(
      cli,
      `#!/bin/sh\necho 'bind: address already in use' >&2\necho x >> ${join(dir, 'starts')}\nexit 2\n`,
    );
    chmodSync(cli, 0o755);
    const logFile = join(dir, 'dev-server.log');
    await expect(startDevServer({ logFile }, { ...process.env, TEMPORAL_CLI_PATH: cli })).rejects.toThrow(
      `the Temporal dev server exited with code 2 during start-up; see ${logFile}`,
    );
    expect(readFileSync(join(dir, 'starts'), 'utf8').trim().split('\n')).toHaveLength(3);
    rmSync(dir, { recursive: true, force: true });
  });
});

describe('npm run serve', () => {
  it('reports a port in use as such, exits 2 and leaves nothing running', async () => {
    const llm = await model();
    const { env, port: devPort } = await embeddedEnv(llm.baseURL);
    const blocker = createServer().listen(0, '127.0.0.1');
    await once(blocker, 'listening');
    const busy = (blocker.address() as { port: number }).port;
    try {
      const r = await runTs(['serve.ts'], { ...env, PORT: String(busy) });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(
        `serve: port ${busy} is in use on 127.0.0.1; stop what uses it or set PORT to another port`,
      );
      expect(r.stderr).not.toMatch(/Cannot close connection/);
      expect(await listening(devPort)).toBe(false); // no dev server was started for it
    } finally {
      blocker.close();
    }
  });
});
