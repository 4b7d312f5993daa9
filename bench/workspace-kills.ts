/**
 * A 40-step coding task, run twice on the same scripted model (`npm run bench:workspace` runs it
 * after the snapshot figures; alone: `node --import tsx bench/workspace-kills.ts`):
 * - once on one worker;
 * - once with the worker SIGKILLed at every fifth step while that step's tool call runs (a
 *   `bash` command that sleeps, so the kill lands mid-command), a new worker with an empty
 *   workspace directory of its own started each time (another machine, as far as the run knows).
 * Both runs must end with the same workspace, byte for byte: the same manifest reference (the
 * SHA-256 of every path, content and mode), and the same files read back. Reported: each run's
 * wall time, the kills that landed, and the attempts the killed calls took.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { startDevServer } from '../src/connection/dev-server';
import { runOutcome, startAgentRun } from '../src/client/run-agent';
import { stateAtStep, workspaceStates, workspaceTar } from '../src/client/workspaces';
import { FileBlobStore } from '../src/storage/blob-store';
import { startOpenAICompatibleServer, type ChatRequest } from '../src/testing/openai-compatible-server';

const ROOT = join(__dirname, '..');
const STEPS = 40;

/** Step i's tool call: files written, edited, and commands that build on them (deterministic). */
function step(i: number): { name: string; arguments: Record<string, unknown> } {
  const n = i + 1;
  if (n % 5 === 0)
    // The kill lands while this sleeps; the line it appends must appear once.
    return {
      name: 'bash',
      arguments: { command: `sleep 2; echo "step ${n}" >> log.txt; wc -l < log.txt > count.txt` },
    };
  if (n % 5 === 1) return { name: 'write_file', arguments: { path: `src/m${n}.sh`, content: `echo module ${n}\n` } };
  if (n % 5 === 2)
    return {
      name: 'bash',
      arguments: {
        command: `sh src/m${n - 1}.sh > out/m${n - 1}.txt 2>&1 || mkdir -p out && sh src/m${n - 1}.sh > out/m${n - 1}.txt`,
      },
    };
  if (n % 5 === 3)
    return { name: 'edit_file', arguments: { path: `src/m${n - 2}.sh`, old_string: 'module', new_string: 'MODULE' } };
  return { name: 'bash', arguments: { command: `cat src/*.sh | sort > all.txt; rm -f out/m${n - 3}.txt` } };
}

function model(onStep: (n: number) => void) {
  return startOpenAICompatibleServer((req: ChatRequest) => {
    const done = req.messages.filter((m) => m.role === 'tool').length;
    if (done >= STEPS) return { content: 'done' };
    onStep(done + 1);
    const s = step(done);
    return { toolCalls: [{ id: `call_${done + 1}`, name: s.name, arguments: JSON.stringify(s.arguments) }] };
  });
}

function startWorker(env: NodeJS.ProcessEnv): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'worker.ts'], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  return new Promise((resolve, reject) => {
    const timer = setInterval(() => {
      if (/Press Ctrl\+C/.test(out)) {
        clearInterval(timer);
        resolve(child);
      } else if (child.exitCode !== null) {
        clearInterval(timer);
        reject(new Error(`a worker did not start:\n${out}`));
      }
    }, 100);
  });
}

function kill(child: ChildProcess): void {
  try {
    process.kill(-child.pid!, 'SIGKILL');
  } catch {
    child.kill('SIGKILL');
  }
}

async function once(
  client: Client,
  address: string,
  blobs: FileBlobStore,
  killing: boolean,
): Promise<{ ref?: string; tar: Buffer; seconds: number; kills: number; attempts: number[] }> {
  let current = 0;
  const server = await model((n) => (current = n));
  const taskQueue = `bench-ws-${randomUUID().slice(0, 8)}`;
  const env = (dir: string) => ({
    ...process.env,
    TEMPORAL_ADDRESS: address,
    AGENT_TASK_QUEUE: taskQueue,
    OPENAI_BASE_URL: server.baseURL,
    OPENAI_API_KEY: 'bench',
    AGENT_MODEL: 'scripted',
    AGENT_BLOB_DIR: blobs.location,
    AGENT_WORKSPACE_DIR: dir,
  });
  let worker = await startWorker(env(mkdtempSync(join(tmpdir(), 'bench-ws-dir-'))));
  const started = Date.now();
  const handle = await startAgentRun(
    client,
    { message: 'build it', tools: ['bash', 'write_file', 'edit_file'], maxIterations: STEPS + 2 },
    { taskQueue },
  );
  let kills = 0;
  const killer = (async () => {
    if (!killing) return;
    for (let k = 5; k <= STEPS; k += 5) {
      while (current < k) await new Promise((r) => setTimeout(r, 20));
      // The step's command is under way (it sleeps 2 s): kill its worker, start another elsewhere.
      await new Promise((r) => setTimeout(r, 800));
      kill(worker);
      kills++;
      worker = await startWorker(env(mkdtempSync(join(tmpdir(), 'bench-ws-dir-'))));
    }
  })();
  const outcome = await runOutcome(handle);
  await killer;
  const seconds = (Date.now() - started) / 1000;
  kill(worker);
  await server.close();
  if (outcome.status !== 'completed') throw new Error(`the run ended ${outcome.status}`);
  const ref = stateAtStep(await workspaceStates(client, handle.workflowId));
  return {
    ...(ref ? { ref } : {}),
    tar: await workspaceTar(blobs, ref),
    seconds,
    kills,
    attempts: outcome.toolExecutions.filter((e) => (e.attempts ?? 1) > 1).map((e) => e.attempts!),
  };
}

async function main(): Promise<void> {
  const server = await startDevServer({}, process.env);
  const connection = await Connection.connect({ address: server.address });
  const client = new Client({ connection });
  const blobs = new FileBlobStore(mkdtempSync(join(tmpdir(), 'bench-ws-blobs-')));
  try {
    const calm = await once(client, server.address, blobs, false);
    const killed = await once(client, server.address, blobs, true);
    // The tars differ in their mtime fields only if made at different seconds: compare the states.
    const same = calm.ref === killed.ref;
    console.table([
      {
        run: 'one worker',
        seconds: calm.seconds.toFixed(1),
        kills: 0,
        'calls retried': 0,
        state: calm.ref?.slice(0, 19),
      },
      {
        run: 'SIGKILL every 5th step',
        seconds: killed.seconds.toFixed(1),
        kills: killed.kills,
        'calls retried': killed.attempts.length,
        state: killed.ref?.slice(0, 19),
      },
    ]);
    console.log(same ? 'the two final workspaces are identical, byte for byte' : 'THE FINAL WORKSPACES DIFFER');
    if (!same) process.exitCode = 1;
  } finally {
    await connection.close();
    await server.stop();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
