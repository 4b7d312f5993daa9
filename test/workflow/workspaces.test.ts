import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { chownSync, existsSync, mkdtempSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from '@temporalio/worker';
import { AgentsPlugin } from '../../src/worker/agents-plugin';
import { defineAgent } from '../../src/agents/define-agent';
import { runOutcome, startAgentRun } from '../../src/client/run-agent';
import { rerunResult, startRerun } from '../../src/client/rerun';
import { FileBlobStore } from '../../src/storage/blob-store';
import { diffWorkspace, listWorkspace, stateAtStep, workspaceFile, workspaceStates } from '../../src/client/workspaces';
import { answer, call, lastOf, startModel, toolResults } from '../helpers/scripted-model';
import { endConversation, sendMessage } from '../../src/client/conversations';
import { forkConversation, switchBranch } from '../../src/client/branches';
import { modelAt, useTestTemporal } from '../helpers/temporal';
import { startHttpApi } from '../helpers/http-api';
import { itInSandbox } from '../helpers/sandbox';
import { BubblewrapSandbox } from '../../src/workspace/bubblewrap-sandbox';
import { PROXY_PORT } from '../../src/workspace/network-proxy';
import { parseStateRef, workspaceScope } from '../../src/workspace/workspace-store';
import { deleteRun } from '../../src/client/delete-run';

/**
 * Workspaces against a real dev server and the real sandbox (bubblewrap): a run's tools write a
 * file, append to it with bash and read it back; each change is committed with its call's result
 * and readable from the store afterwards; the sandbox keeps commands in the workspace.
 */
const temporal = useTestTemporal();
/** The tests whose commands run in bubblewrap (the HTTP one writes files only). */
const withSandbox = itInSandbox('workspaces.test');

/** Calls each of `calls` in turn, one per model call, then answers with the tool results. */
function script(calls: Array<[string, unknown]>) {
  return startModel((req) => {
    const done = req.messages.filter((m) => m.role === 'tool').length;
    return done < calls.length ? call(calls[done]) : answer(toolResults(req).join('\n---\n'));
  });
}

async function withWorker<T>(
  model: { baseURL: string },
  blobs: FileBlobStore,
  work: (taskQueue: string) => Promise<T>,
) {
  const t = temporal();
  const taskQueue = `ws-${randomUUID()}`;
  const plugin = new AgentsPlugin({
    model: modelAt(model.baseURL),
    blobStore: blobs,
    workspaces: { dir: mkdtempSync(join(tmpdir(), 'ws-dirs-')) },
  });
  const worker = await Worker.create({
    connection: t.nativeConnection,
    taskQueue,
    plugins: [plugin],
    workflowBundle: { codePath: process.env.TEST_WORKFLOW_BUNDLE! },
    shutdownGraceTime: '1s',
  });
  return worker.runUntil(() => work(taskQueue));
}

withSandbox(
  'writes a file, appends to it with bash, reads it back; each change is committed with its result and readable from the store',
  async () => {
    const model = await script([
      ['write_file', { path: 'notes/a.txt', content: 'one\n' }],
      ['bash', { command: 'echo two >> notes/a.txt && ls notes' }],
      ['read_file', { path: '/workspace/notes/a.txt' }],
      ['edit_file', { path: 'notes/a.txt', old_string: 'two', new_string: 'TWO' }],
    ]);
    const blobs = new FileBlobStore(mkdtempSync(join(tmpdir(), 'ws-blobs-')));
    await withWorker(model, blobs, async (taskQueue) => {
      const t = temporal();
      const handle = await startAgentRun(
        t.client,
        { message: 'go', tools: ['write_file', 'bash', 'read_file', 'edit_file'] },
        { taskQueue },
      );
      const outcome = await runOutcome(handle);
      expect(outcome.status).toBe('completed');
      const [write, bash, read, edit] = outcome.toolExecutions;
      expect(write.result).toBe('wrote 4 bytes to notes/a.txt');
      expect(bash.result).toBe('exit code 0\nstdout:\na.txt\n');
      expect(read.result).toBe('1\tone\n2\ttwo');
      expect(edit.error).toBe(false);
      // Writes commit a state; reads do not.
      expect(write.workspace).toMatchObject({ added: ['notes/a.txt'], changed: [], removed: [] });
      expect(bash.workspace).toMatchObject({ added: [], changed: ['notes/a.txt'] });
      expect(read.workspace).toBeUndefined();

      const states = await workspaceStates(t.client, handle.workflowId);
      expect(states.commits.map((c) => c.step)).toEqual([1, 2, 4]);
      const last = stateAtStep(states);
      expect(Buffer.from(await workspaceFile(blobs, last, 'notes/a.txt')).toString()).toBe('one\nTWO\n');
      // The state before the third model call: after bash, before the edit.
      expect(Buffer.from(await workspaceFile(blobs, stateAtStep(states, 3), 'notes/a.txt')).toString()).toBe(
        'one\ntwo\n',
      );
      const diff = await diffWorkspace(blobs, stateAtStep(states, 3), last);
      expect(diff.changes.changed).toEqual(['notes/a.txt']);
      expect(diff.patch).toContain('-two\n+TWO');
    });
  },
);

withSandbox(
  'keeps commands in the sandbox: no password hashes, nothing written outside, no loopback; the model reads why',
  async () => {
    // A server on the host's loopback the sandbox must not reach.
    const server = createServer((s) => s.end('secret\n'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const port = (server.address() as { port: number }).port;
    const outside = join(tmpdir(), `ws-outside-${randomUUID()}`);
    const model = await script([
      ['bash', { command: 'cat /etc/shadow' }],
      ['bash', { command: `echo x > ${outside}; echo x > /usr/escape; ls /root /work` }],
      ['bash', { command: `exec 3<>/dev/tcp/127.0.0.1/${port} && cat <&3` }],
      ['read_file', { path: '../../etc/passwd' }],
      ['bash', { command: 'sleep 5', timeout: 1 }],
    ]);
    const blobs = new FileBlobStore(mkdtempSync(join(tmpdir(), 'ws-blobs-')));
    try {
      await withWorker(model, blobs, async (taskQueue) => {
        const handle = await startAgentRun(
          temporal().client,
          { message: 'go', tools: ['bash', 'read_file'] },
          { taskQueue },
        );
        const outcome = await runOutcome(handle);
        const [shadow, write, connect, escape, slow] = outcome.toolExecutions.map((e) => e.result);
        expect(shadow).toMatch(/^exit code 1\nstderr:\ncat: \/etc\/shadow: Permission denied/);
        expect(write).toMatch(/No such file or directory|Read-only file system/);
        expect(write).toContain('/usr/escape: Read-only file system');
        expect(existsSync(outside)).toBe(false);
        expect(existsSync('/usr/escape')).toBe(false);
        expect(connect).toMatch(/Connection refused|Network is unreachable/);
        expect(connect).not.toContain('secret');
        expect(escape).toContain('outside the workspace');
        expect(outcome.toolExecutions[3].error).toBe(true);
        expect(slow).toBe('the command timed out and was killed\n(no output)');
        // Nothing was written in the workspace either: no state was committed.
        expect(outcome.toolExecutions.every((e) => e.workspace === undefined)).toBe(true);
      });
    } finally {
      server.close();
    }
  },
);

withSandbox(
  'keeps what a command makes that a state cannot hold, tells the model what it refuses, and bounds the disk while a command runs',
  async () => {
    const model = await script([
      ['write_file', { path: 'run.sh', content: '#!/bin/sh\necho one\n' }],
      [
        'bash',
        { command: 'chmod +x run.sh && mkfifo pipe && echo b > "back\\slash" && echo n > "$(printf \'new\\nline\')"' },
      ],
      ['edit_file', { path: 'run.sh', old_string: 'one', new_string: 'two' }],
      ['bash', { command: './run.sh' }],
      ['grep', { pattern: 'two' }],
      ['bash', { command: 'head -c 3M /dev/zero > a && head -c 3M /dev/zero > b && sleep 5' }],
      ['bash', { command: 'head -c 3M /dev/zero > /tmp/a; head -c 3M /dev/zero > /tmp/b; ls' }],
    ]);
    const blobs = new FileBlobStore(mkdtempSync(join(tmpdir(), 'ws-blobs-')));
    await withWorker(model, blobs, async (taskQueue) => {
      const handle = await startAgentRun(
        temporal().client,
        { message: 'go', tools: ['bash', 'write_file', 'edit_file', 'grep'], workspace: { diskMb: 4 } },
        { taskQueue },
      );
      const outcome = await runOutcome(handle);
      const [, made, , ran, grepped, full, tmp] = outcome.toolExecutions;
      expect(made.result).toBe('exit code 0\n(no output)');
      // The edit kept the execute bit; grep did not wait on the FIFO (no state keeps one).
      expect(ran.result).toBe('exit code 0\nstdout:\ntwo\n');
      expect(grepped.result).toBe('run.sh:2:echo two');
      // Past diskMb while it ran: killed, its changes undone, the model told.
      expect(full.error).toBe(true);
      expect(full.result).toMatch(/more than its 4 MiB \(workspace\.diskMb\): the call's changes were undone/);
      expect(tmp.result).toMatch(/No space left on device/);
      expect(tmp.result).not.toMatch(/\ba\n/);
      // Names a tool could not write are kept, and read back from the store.
      const states = await workspaceStates(temporal().client, handle.workflowId);
      const last = stateAtStep(states);
      const files = await listWorkspace(blobs, last);
      expect(files.map((f) => f.path)).toEqual(['back\\slash', 'new\nline', 'run.sh']);
      expect(files.find((f) => f.path === 'run.sh')?.executable).toBe(true);
      expect(Buffer.from(await workspaceFile(blobs, last, 'back\\slash')).toString()).toBe('b\n');
    });
  },
);

withSandbox(
  'a conversation edited at an earlier message works on the workspace as it was then; a new conversation forked there too',
  async () => {
    // Each turn's first call does what its message says; then the model answers with the tool's result.
    const model = await startModel((req) => {
      const last = req.messages[req.messages.length - 1];
      if (last.role === 'tool') return answer(String(last.content));
      const asked = lastOf(req, 'user');
      if (asked === 'one') return call(['write_file', { path: 'a.txt', content: 'v1\n' }]);
      if (asked === 'two') return call(['bash', { command: 'echo v2 > a.txt; echo new > b.txt' }]);
      return call(['bash', { command: 'cat a.txt; ls' }]);
    });
    const blobs = new FileBlobStore(mkdtempSync(join(tmpdir(), 'ws-blobs-')));
    await withWorker(model, blobs, async (taskQueue) => {
      const t = temporal();
      const start = { taskQueue, options: { tools: ['write_file', 'bash'] } };
      const id = `ws-conv-${randomUUID()}`;
      await sendMessage(t.client, id, { message: 'one' }, start);
      await sendMessage(t.client, id, { message: 'two', messageId: 'm2' }, start);
      const now = await sendMessage(t.client, id, { message: 'look' }, start);
      expect(now.content).toBe('exit code 0\nstdout:\nv2\na.txt\nb.txt\n');

      // "two" replaced: the turn sees the workspace as it was when "two" was sent.
      const edited = await sendMessage(t.client, id, { message: 'look again', fork: { atMessageId: 'm2' } }, start);
      expect(edited.content).toBe('exit code 0\nstdout:\nv1\na.txt\n');
      // People see the state of the branch it works on now, not the last commit (the replaced branch's).
      const onEdit = await workspaceStates(t.client, id);
      expect(stateAtStep(onEdit)).not.toBe(onEdit.commits.at(-1)!.ref);
      expect(Buffer.from(await workspaceFile(blobs, stateAtStep(onEdit), 'a.txt')).toString()).toBe('v1\n');

      // A new conversation from the same point starts from that state too.
      const forked = await forkConversation(
        t.client,
        id,
        { atMessage: 4, branch: 'main', message: 'look there', into: `${id}-fork` },
        { ...start, blobStore: blobs },
      );
      expect(forked.result?.content).toBe('exit code 0\nstdout:\nv1\na.txt\n');
      // The branch the edit replaced kept its own state.
      await switchBranch(t.client, id, 'main');
      const back = await sendMessage(t.client, id, { message: 'look' }, start);
      expect(back.content).toBe('exit code 0\nstdout:\nv2\na.txt\nb.txt\n');
      await expect(deleteRun(t.client, id, { blobs })).rejects.toThrow(/is open: end it first/);
      await endConversation(t.client, id);
      await endConversation(t.client, `${id}-fork`);

      // The fork started from a copy of that state in its own scope (made as it was forked), so
      // deleting the conversation it came from deletes that one's states and leaves the fork's.
      const forkStates = await workspaceStates(t.client, `${id}-fork`);
      expect(parseStateRef(forkStates.initial!).scope).toBe(workspaceScope('default', `${id}-fork`));
      expect(parseStateRef(stateAtStep(forkStates)!).scope).toBe(workspaceScope('default', `${id}-fork`));
      await t.client.workflow.getHandle(id).result();
      // Closed, back on the first branch: its result says which state that branch ended on.
      const ended = await workspaceStates(t.client, id);
      expect(ended.current?.ref).toBeDefined();
      expect(await listWorkspace(blobs, stateAtStep(ended))).toHaveLength(2);
      const deleted = await deleteRun(t.client, id, { blobs });
      expect(deleted).toMatchObject({ workflowId: id, kind: 'conversation' });
      expect(deleted.workspaceBlobs).toBeGreaterThanOrEqual(5); // 3 states, their contents
      expect(existsSync(join(blobs.location, 'scopes', workspaceScope('default', id)))).toBe(false);
      expect(Buffer.from(await workspaceFile(blobs, stateAtStep(forkStates), 'a.txt')).toString()).toBe('v1\n');
    });
  },
);

withSandbox(
  'a coding agent with a workspace writes a program, tests it, reads the failure, fixes it, and tests again',
  async () => {
    const coder = defineAgent({
      name: 'ws-coder',
      instructions: 'You write small, tested programs.',
      // No workspace tool named: the workspace brings them.
      tools: [],
      workspace: { commandTimeout: '30s' },
    });
    const steps: Array<[string, unknown]> = [
      ['write_file', { path: 'add.sh', content: 'echo $(($1 - $2))\n' }],
      [
        'write_file',
        { path: 'test.sh', content: '[ "$(sh add.sh 2 3)" = 5 ] && echo PASS || { echo FAIL; exit 1; }\n' },
      ],
      ['bash', { command: 'sh test.sh' }],
      ['edit_file', { path: 'add.sh', old_string: '$1 - $2', new_string: '$1 + $2' }],
      ['bash', { command: 'sh test.sh' }],
    ];
    const model = await startModel((req) => {
      const done = req.messages.filter((m) => m.role === 'tool').length;
      return done < steps.length ? call(steps[done]) : answer(toolResults(req).at(-1)!);
    });
    const blobs = new FileBlobStore(mkdtempSync(join(tmpdir(), 'ws-blobs-')));
    const t = temporal();
    const taskQueue = `ws-coder-${randomUUID()}`;
    const worker = await Worker.create({
      connection: t.nativeConnection,
      taskQueue,
      plugins: [new AgentsPlugin({ agents: [coder], model: modelAt(model.baseURL), blobStore: blobs })],
      workflowBundle: { codePath: process.env.TEST_WORKFLOW_BUNDLE! },
      shutdownGraceTime: '1s',
    });
    await worker.runUntil(async () => {
      const handle = await startAgentRun(t.client, { message: 'add two numbers', agent: 'ws-coder' }, { taskQueue });
      const outcome = await runOutcome(handle);
      expect(outcome.toolExecutions[2].result).toBe('exit code 1\nstdout:\nFAIL\n');
      expect(outcome.content).toBe('exit code 0\nstdout:\nPASS\n');
      const states = await workspaceStates(t.client, handle.workflowId);
      expect(Buffer.from(await workspaceFile(blobs, stateAtStep(states), 'add.sh')).toString()).toBe(
        'echo $(($1 + $2))\n',
      );
    });
  },
);

it('serves the workspace over HTTP to its tenant, and to no other', async () => {
  const model = await script([['write_file', { path: 'src/a.txt', content: 'hello\n' }]]);
  const t = temporal();
  const taskQueue = `ws-http-${randomUUID()}`;
  // The default blob store, which the HTTP API reads too (AGENT_BLOB_DIR or its default).
  const worker = await Worker.create({
    connection: t.nativeConnection,
    taskQueue,
    plugins: [new AgentsPlugin({ model: modelAt(model.baseURL) })],
    workflowBundle: { codePath: process.env.TEST_WORKFLOW_BUNDLE! },
    shutdownGraceTime: '1s',
  });
  const suffix = randomUUID().slice(0, 6);
  const [OWNER, OTHER] = [`owner-token-${suffix}-0123456789`, `other-token-${suffix}-0123456789`];
  const access = { tokens: [OWNER, OTHER], tenants: { [OWNER]: `ws-a-${suffix}`, [OTHER]: `ws-b-${suffix}` } };
  await worker.runUntil(async () => {
    const api = await startHttpApi({ client: t.client, taskQueue, access });
    const get = (token: string, path: string) =>
      fetch(`${api.base}${path}`, {
        headers: { authorization: `Bearer ${token}` },
        signal: AbortSignal.timeout(30_000),
      });
    try {
      const started = await fetch(`${api.base}/runs`, {
        method: 'POST',
        headers: { authorization: `Bearer ${OWNER}`, 'content-type': 'application/json' },
        body: JSON.stringify({ message: 'go', tools: ['write_file'] }),
      });
      expect(started.status).toBeLessThan(300);
      const id = ((await started.json()) as { workflowId: string }).workflowId;
      const base = `/runs/${id}/workspace`;
      let file: Response | undefined;
      for (const deadline = Date.now() + 30_000; Date.now() < deadline;) {
        file = await get(OWNER, `${base}/file?path=src/a.txt`);
        if (file.status === 200) break;
        await new Promise((r) => setTimeout(r, 200)); // polling for the run's first commit
      }
      expect(await file!.text()).toBe('hello\n');
      const files = await (await get(OWNER, `${base}/files?path=src`)).json();
      expect(files.files.map((f: { path: string }) => f.path)).toEqual(['src/a.txt']);
      const diff = await (await get(OWNER, `${base}/diff`)).json();
      expect(diff.changes.added).toEqual(['src/a.txt']);
      const tar = Buffer.from(await (await get(OWNER, `${base}/export`)).arrayBuffer());
      expect(tar.subarray(0, 9).toString()).toBe('src/a.txt');
      expect((await get(OWNER, `${base}/files?step=zero`)).status).toBe(400);
      expect((await get(OWNER, `${base}/file?path=nope`)).status).toBe(404);
      // Another tenant: as for an id no workflow has.
      const theirs = await get(OTHER, `${base}/file?path=src/a.txt`);
      const nobody = await get(OTHER, `/runs/nobody-${suffix}/workspace/file?path=src/a.txt`);
      expect(theirs.status).toBe(404);
      expect(nobody.status).toBe(404);
      expect((await get(OTHER, base)).status).toBe(404);

      // Deleting the run deletes its workspace states; no other tenant can.
      const del = (token: string, path: string) =>
        fetch(`${api.base}${path}`, { method: 'DELETE', headers: { authorization: `Bearer ${token}` } });
      await t.client.workflow.getHandle(id).result();
      expect((await del(OTHER, `/runs/${id}`)).status).toBe(404);
      expect((await del(OWNER, `/conversations/${id}`)).status).toBe(404); // a run is no conversation
      const scope = join(process.env.AGENT_BLOB_DIR!, 'scopes', workspaceScope('default', id));
      expect(existsSync(scope)).toBe(true);
      const deleted = await del(OWNER, `/runs/${id}`);
      expect(deleted.status).toBe(200);
      expect(await deleted.json()).toMatchObject({ workflowId: id, kind: 'run', workspaceBlobs: 2 });
      expect(existsSync(scope)).toBe(false);
    } finally {
      api.close();
    }
  });
});

withSandbox('re-runs from step K on the workspace as it was before model call K', async () => {
  // The recorded run: write, append, read. The re-run (another system message) reads at its step.
  const model = await startModel((req) => {
    const done = req.messages.filter((m) => m.role === 'tool').length;
    const rerun = req.messages[0]?.role === 'system' && req.messages[0].content === 'again';
    const steps: Array<[string, unknown]> = [
      ['write_file', { path: 'a.txt', content: 'v1\n' }],
      ['bash', { command: 'echo v2 >> a.txt' }],
      ['read_file', { path: 'a.txt' }],
    ];
    // The re-run starts after the recorded write (one tool result): it reads, then answers.
    if (rerun) return done < 2 ? call(['bash', { command: 'cat a.txt' }]) : answer(toolResults(req).at(-1)!);
    return done < steps.length ? call(steps[done]) : answer(toolResults(req).at(-1)!);
  });
  const blobs = new FileBlobStore(mkdtempSync(join(tmpdir(), 'ws-blobs-')));
  await withWorker(model, blobs, async (taskQueue) => {
    const t = temporal();
    const handle = await startAgentRun(
      t.client,
      { message: 'go', tools: ['write_file', 'bash', 'read_file'] },
      { taskQueue },
    );
    expect((await runOutcome(handle)).content).toBe('1\tv1\n2\tv2');
    // Before model call 2: only the write is in the workspace.
    const rerun = await startRerun(t.client, handle.workflowId, { taskQueue, fromStep: 2, system: 'again' });
    const { outcome } = await rerunResult(t.client, rerun);
    expect(outcome.content).toBe('exit code 0\nstdout:\nv1\n');
  });
});

withSandbox('reaches only the hosts the workspace allows, through its proxy; with none allowed, nothing', async () => {
  const server = createHttpServer((_req, res) => res.end('hello from the host\n'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as { port: number }).port;
  const sandbox = new BubblewrapSandbox();
  const dir = mkdtempSync(join(tmpdir(), 'ws-net-'));
  if (sandbox.sandboxUid !== undefined) chownSync(dir, sandbox.sandboxUid, sandbox.sandboxUid);
  // HTTP by hand through the proxy the sandbox's HTTP_PROXY names (no curl needed).
  const get = (url: string) =>
    `exec 3<>/dev/tcp/127.0.0.1/${PROXY_PORT} && printf 'GET ${url} HTTP/1.0\\r\\n\\r\\n' >&3 && cat <&3; echo`;
  const run = (command: string, network: string[]) =>
    sandbox.run({ dir, command, network, timeoutMs: 10_000, limits: { memoryMb: 512, processes: 64, fileMb: 16 } });
  try {
    const allowed = await run(`${get(`http://localhost:${port}/`)}; ${get('http://example.org/')}`, ['localhost']);
    expect(allowed.stdout).toContain('hello from the host');
    expect(allowed.stdout).toContain('403 Forbidden');
    expect(allowed.stdout).toContain("may not reach example.org: it is not in the workspace's network allow-list");
    const none = await run(get(`http://localhost:${port}/`), []);
    expect(none.stderr).toMatch(/Connection refused|Network is unreachable/);
    expect(none.stdout).not.toContain('hello from the host');
  } finally {
    server.close();
  }
});
