/**
 * Memory across conversations, measured (`npm run bench` runs it; alone: `npm run bench:memory`):
 *
 * 1. Recall latency: p50 and p95 of one `recall` (the top 8 facts of one user for a question)
 *    with 10,000 and 100,000 facts in the store (1,000 users), on the embedded store (PGlite, full
 *    text and pgvector, the test kit's 64-dimension embeddings computed in-process) and on a
 *    PostgreSQL server (Debian's, full text only; skipped without one). Target: p95 <= 20 ms at
 *    100,000 on this machine.
 * 2. The memory eval (bench/memory/sessions.jsonl) scored with `durable-agents eval`, once by an
 *    agent with memory and once by the same agent without: answer accuracy (the eval's pass rate
 *    over the questions) and recall accuracy (the questions whose fact was in what the model was
 *    shown). The model is deterministic (bench/memory/model.ts): the scores measure the memory.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Embedder } from '../src/memory-store/memory-store';
import { openPglite, openPostgres, type SqlClient } from '../src/memory-store/sql-client';
import { SqlMemoryStore } from '../src/memory-store/sql-memory-store';
import { scriptedEmbedding } from '../src/testing/scripted-embeddings';
import { startOpenAICompatibleServer } from '../src/testing/openai-compatible-server';
import { postgresProblem, startPostgres } from '../test/helpers/postgres-server';
import { memoryEvalModel } from './memory/model';

const USERS = 1_000;
const QUERIES = Number(process.env.BENCH_RECALL_QUERIES ?? 300);
const SIZES = [10_000, 100_000];
const WORDS = [
  'aisle',
  'window',
  'Lyon',
  'Paris',
  'Rome',
  'peanuts',
  'dogs',
  'cats',
  'tea',
  'coffee',
  'jazz',
  'chess',
  'sailing',
  'nurse',
  'teacher',
  'invoice',
  'card',
  'vegan',
  'green',
  'blue',
];
const VERBS = ['Prefers', 'Dislikes', 'Asked about', 'Lives near', 'Pays with', 'Plays', 'Works with', 'Talks about'];
const QUESTIONS = [
  'Which seat should I book?',
  'Where do I live?',
  'How do I pay?',
  'What do I like to drink?',
  'What is my job?',
];

const embedder: Embedder = { model: 'scripted', embed: async (texts) => texts.map(scriptedEmbedding) };

function factText(n: number): string {
  return `${VERBS[n % VERBS.length]} ${WORDS[(n * 7) % WORDS.length]} and ${WORDS[(n * 13 + 3) % WORDS.length]} (note ${n})`;
}

/** Fills the store to `total` facts, 1,000 rows a statement (vectors where the store has them). */
async function fill(db: SqlClient, from: number, total: number, vectors: boolean): Promise<void> {
  for (let start = from; start < total; start += 1000) {
    const rows: string[] = [];
    const params: unknown[] = [];
    for (let n = start; n < Math.min(total, start + 1000); n++) {
      const text = factText(n);
      params.push(`f_bench${n}`, `u${n % USERS}`, text, `bench:${n}`);
      if (vectors) params.push(`[${scriptedEmbedding(text).join(',')}]`);
      const k = params.length - (vectors ? 5 : 4);
      rows.push(
        vectors
          ? `($${k + 1}, 'bench', $${k + 2}, $${k + 3}, $${k + 4}, $${k + 5}::vector, 'scripted')`
          : `($${k + 1}, 'bench', $${k + 2}, $${k + 3}, $${k + 4})`,
      );
    }
    await db.query(
      `INSERT INTO agent_memory_facts (id, tenant, user_id, text, idempotency_key${vectors ? ', embedding, embedding_model' : ''}) VALUES ${rows.join(',')}`,
      params,
    );
  }
  await db.exec('ANALYZE agent_memory_facts');
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function recallLatency(kind: string, db: SqlClient, store: SqlMemoryStore, vectors: boolean): Promise<string[]> {
  const lines: string[] = [];
  let filled = 0;
  for (const size of SIZES) {
    await fill(db, filled, size, vectors);
    filled = size;
    const times: number[] = [];
    for (let i = 0; i < QUERIES + 20; i++) {
      const started = performance.now();
      await store.recall({ tenant: 'bench', user: `u${(i * 37) % USERS}` }, QUESTIONS[i % QUESTIONS.length], 8);
      if (i >= 20) times.push(performance.now() - started); // the first 20 warm the caches
    }
    times.sort((a, b) => a - b);
    lines.push(
      `  ${kind.padEnd(44)} ${String(size).padStart(7)} facts   p50 ${percentile(times, 50).toFixed(1).padStart(5)} ms   p95 ${percentile(times, 95).toFixed(1).padStart(5)} ms`,
    );
    console.log(lines.at(-1));
  }
  return lines;
}

/** Runs `durable-agents <args>` and answers its output. */
function cli(
  args: string[],
  env: NodeJS.ProcessEnv,
  until?: RegExp,
): Promise<{ out: string; stdout: string; stop: () => void }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/bin/durable-agents.ts', ...args], {
    env,
    detached: true,
  });
  let out = '';
  let stdout = '';
  child.stdout.on('data', (d) => ((out += d), (stdout += d)));
  child.stderr.on('data', (d) => (out += d));
  const stop = () => {
    try {
      process.kill(-child.pid!, 'SIGINT');
    } catch {
      // gone
    }
  };
  return new Promise((resolve, reject) => {
    if (until) {
      const check = () => until.test(out) && resolve({ out, stdout, stop });
      child.stdout.on('data', check);
      child.stderr.on('data', check);
    }
    child.on('close', (code) =>
      until ? reject(new Error(`exited with ${code}:\n${out}`)) : resolve({ out, stdout, stop }),
    );
  });
}

/** The memory eval with and without memory. */
async function memoryEval(): Promise<string[]> {
  const cases = readFileSync(join(__dirname, 'memory', 'sessions.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.trim() && !l.startsWith('#'))
    .map(
      (l) =>
        JSON.parse(l) as { name: string; input: { message: string }; expected: { contains?: string; regex?: string } },
    );
  const questions = cases.filter((c) => !/-s\d/.test(c.name));
  const model = await startOpenAICompatibleServer(memoryEvalModel);
  const dir = mkdtempSync(join(tmpdir(), 'durable-agents-memory-eval-'));
  const env = {
    ...process.env,
    TEMPORAL_ADDRESS: '',
    OPENAI_BASE_URL: model.baseURL,
    OPENAI_API_KEY: 'bench',
    AGENT_MODEL: 'scripted',
    AGENT_MEMORY_DIR: join(dir, 'memory'),
    AGENT_TASK_QUEUE: `memory-eval-${randomUUID()}`,
    AGENT_DEV_SERVER_DB: join(dir, 'temporal.db'),
  };
  const worker = await cli(
    ['worker', '--module', 'bench/memory/agents.ts'],
    { ...env, NODE_OPTIONS: '--import tsx' },
    /Press Ctrl\+C/,
  );
  const address = /at (\S+:\d+)/.exec(worker.out)?.[1];
  const lines: string[] = [];
  try {
    for (const agent of ['with-memory', 'without-memory']) {
      const first = model.requests.length;
      const { stdout: out } = await cli(
        ['eval', 'bench/memory/sessions.jsonl', '--agent', agent, '--concurrency', '1', '--json'],
        { ...env, TEMPORAL_ADDRESS: address! },
      );
      if (process.env.BENCH_DEBUG) console.log(out);
      // One JSON line per case (and a summary line).
      const results = out
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as { name?: string; pass?: boolean });
      const passed = results.filter((c) => questions.some((q) => q.name === c.name) && c.pass).length;
      // What the model was shown for each question, in order (--concurrency 1).
      const shown = model.requests
        .slice(first)
        .filter((r) => !String(r.messages[0].content).startsWith('You keep'))
        .filter((r) => questions.some((q) => r.messages.some((m) => m.content === q.input.message)));
      let recalled = 0;
      let recallable = 0;
      for (const [i, q] of questions.entries()) {
        const want = q.expected.contains ?? /\.\*(\w+)$/.exec(q.expected.regex ?? '')?.[1];
        if (!want || /don't know/.test(want)) continue;
        recallable++;
        const memory = String(shown[i]?.messages.find((m) => String(m.content).startsWith('<memory>'))?.content ?? '');
        if (memory.includes(want)) recalled++;
      }
      lines.push(
        `  ${agent.padEnd(16)} answer accuracy ${passed}/${questions.length} (${(passed / questions.length).toFixed(2)})   recall accuracy ${recalled}/${recallable} (${(recalled / recallable).toFixed(2)})`,
      );
      console.log(lines.at(-1));
    }
  } finally {
    worker.stop();
    await model.close();
    setTimeout(() => rmSync(dir, { recursive: true, force: true }), 2000).unref();
  }
  return lines;
}

/** Prints the memory figures. */
export async function memoryBench(): Promise<void> {
  console.log('');
  if (!process.env.BENCH_MEMORY_EVAL_ONLY) await latencies();
  console.log('');
  console.log(
    'Memory eval (bench/memory/sessions.jsonl, 3 users, 17 sessions, 2 facts changed), scored with durable-agents eval:',
  );
  await memoryEval();
}

async function latencies(): Promise<void> {
  console.log(
    `Memory across conversations: recall latency (one user's top 8 for a question, ${QUERIES} recalls, ${USERS} users)`,
  );
  const dir = mkdtempSync(join(tmpdir(), 'durable-agents-memory-bench-'));
  try {
    const pglite = await openPglite(join(dir, 'pglite'));
    const embedded = await SqlMemoryStore.open(pglite, 'embedded', dir, embedder);
    await recallLatency('embedded (PGlite: full text + pgvector)', pglite, embedded, true);
    await embedded.close();
    const skip = postgresProblem();
    if (skip) console.log(`  PostgreSQL: skipped (${skip})`);
    else {
      const server = await startPostgres();
      try {
        const pg = await openPostgres(server.url);
        const store = await SqlMemoryStore.open(pg, 'postgres', 'bench', embedder);
        await recallLatency('PostgreSQL 15 (full text; no pgvector here)', pg, store, false);
        await store.close();
      } finally {
        await server.stop();
      }
    }
    console.log('  (target: p95 at most 20 ms at 100,000 facts)');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (require.main === module)
  memoryBench().then(
    () => process.exit(0),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
