import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openMemoryStore } from '../../src/memory-store/open-memory-store';
import { MemoryDeletedError } from '../../src/memory-store/sql-memory-store';
import type { Embedder, MemoryStore } from '../../src/memory-store/memory-store';
import { scriptedEmbedding } from '../../src/testing/scripted-embeddings';
import { startOpenAICompatibleServer } from '../../src/testing/openai-compatible-server';
import { memorySettings } from '../../src/worker/memory-settings';
import { modelConfigFromEnv } from '../../src/models/model-config';
import { postgresProblem, startPostgres, type TestPostgres } from '../helpers/postgres-server';

/**
 * The memory store's contract, against both databases it runs on: the embedded PGlite (with
 * pgvector, and the scripted embeddings) and a real PostgreSQL server (Debian's, without
 * pgvector: full text only, as a fleet without the extension runs it).
 */
jest.setTimeout(120_000);

const embedder: Embedder = { model: 'scripted', embed: async (texts) => texts.map(scriptedEmbedding) };
const skip = postgresProblem();
if (skip) console.log(`memory-store.test: the PostgreSQL half is skipped: ${skip}`);

let postgres: TestPostgres | undefined;
const dir = mkdtempSync(join(tmpdir(), 'durable-agents-memory-'));
afterAll(async () => {
  await postgres?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const stores: [string, () => Promise<MemoryStore>][] = [
  ['embedded (PGlite)', () => openMemoryStore({ dir: join(dir, 'pglite') }, embedder)],
  ...(skip
    ? []
    : ([
        [
          'PostgreSQL',
          async () => {
            postgres = await startPostgres();
            return openMemoryStore({ url: postgres.url }, embedder);
          },
        ],
      ] as [string, () => Promise<MemoryStore>][])),
];

describe.each(stores)('%s', (kind, open) => {
  let store: MemoryStore;
  beforeAll(async () => {
    store = await open();
  });
  afterAll(() => store.close());

  const alice = { tenant: 'acme', user: 'alice' };

  it('keeps a fact once per key: a retried write answers with the fact the first one stored', async () => {
    const first = await store.remember(alice, { text: 'Prefers aisle seats on long flights' }, 'k-aisle');
    const again = await store.remember(alice, { text: 'Prefers aisle seats on long flights' }, 'k-aisle');
    expect(again.id).toBe(first.id);
    expect((await store.list({ tenant: 'acme', user: 'alice' })).filter((f) => f.text.includes('aisle'))).toHaveLength(
      1,
    );
    expect(first).toMatchObject({
      tenant: 'acme',
      user: 'alice',
      confidence: 1,
      text: 'Prefers aisle seats on long flights',
    });
  });

  it("recalls a user's facts by the words of a question, never another user's or tenant's", async () => {
    await store.remember(alice, { text: 'Lives in Lyon, France', value: { city: 'Lyon' } }, 'k-lyon');
    await store.remember(alice, { text: 'Is allergic to peanuts' }, 'k-peanuts');
    await store.remember({ tenant: 'acme', user: 'bob' }, { text: 'Prefers window seats' }, 'k-bob');
    await store.remember({ tenant: 'globex', user: 'alice' }, { text: 'Prefers middle seats' }, 'k-globex');
    const found = await store.recall(alice, 'Which seat should I book for the flight?', 1);
    expect(found.map((f) => f.text)).toEqual(['Prefers aisle seats on long flights']);
    const all = await store.recall(alice, 'seats', 10);
    expect(all.map((f) => f.text).sort()).toEqual(
      ['Is allergic to peanuts', 'Lives in Lyon, France', 'Prefers aisle seats on long flights'].sort(),
    );
    expect(all.find((f) => f.text.startsWith('Lives'))?.value).toEqual({ city: 'Lyon' });
    expect((await store.recall({ tenant: 'acme', user: 'bob' }, 'seat', 10)).map((f) => f.text)).toEqual([
      'Prefers window seats',
    ]);
    expect((await store.recall({ user: 'alice' }, 'seat', 10)).map((f) => f.text)).toEqual([]);
  });

  it('updates and forgets by id, within the scope only; a forgotten fact stays forgotten when its write is retried', async () => {
    const lyon = (await store.recall(alice, 'Lyon', 1))[0];
    expect(await store.update({ tenant: 'acme', user: 'bob' }, lyon.id, 'Lives in Paris')).toBe(false);
    expect(await store.update(alice, lyon.id, 'Lives in Paris, France')).toBe(true);
    expect((await store.recall(alice, 'Paris', 1))[0]).toMatchObject({ id: lyon.id, text: 'Lives in Paris, France' });
    expect(await store.forget({ tenant: 'acme', user: 'bob' }, [lyon.id])).toEqual([]);
    expect(await store.forget(alice, [lyon.id, 'f_none'])).toEqual([lyon.id]);
    await expect(store.remember(alice, { text: 'Lives in Lyon, France' }, 'k-lyon')).rejects.toBeInstanceOf(
      MemoryDeletedError,
    );
  });

  it("keeps a profile per user, and `delete` removes a user's facts and profile in every tenant and records it", async () => {
    await store.setProfile(alice, { name: 'Alice', seat: 'aisle' });
    await store.setProfile(alice, { name: 'Alice', seat: 'window' });
    expect(await store.profile(alice)).toEqual({ name: 'Alice', seat: 'window' });
    expect(await store.profile({ tenant: 'acme', user: 'bob' })).toBeUndefined();
    const deletion = await store.delete({ user: 'alice' }, 'test');
    expect(deletion).toMatchObject({ by: 'test', user: 'alice', facts: 3, profiles: 1 });
    expect(await store.recall(alice, 'seat peanuts aisle', 10)).toEqual([]);
    expect(await store.recall({ tenant: 'globex', user: 'alice' }, 'seat', 10)).toEqual([]);
    expect(await store.profile(alice)).toBeUndefined();
    expect((await store.recall({ tenant: 'acme', user: 'bob' }, 'seat', 10)).length).toBe(1);
    expect((await store.deletions({ user: 'alice' }))[0]).toMatchObject({ by: 'test', facts: 3 });
    // A retried write of a deleted fact stays deleted.
    await expect(store.remember(alice, { text: 'x' }, 'k-peanuts')).rejects.toBeInstanceOf(MemoryDeletedError);
  });

  it("keeps an agent's own facts (scope: agent) apart from other agents', beside the user's shared ones", async () => {
    const carl = { tenant: 'acme', user: 'carl' };
    await store.remember(carl, { text: 'Speaks French' }, 'k-shared');
    await store.remember({ ...carl, agent: 'travel' }, { text: 'Books trains, not planes' }, 'k-travel');
    const texts = async (agent?: string) =>
      (await store.recall(agent ? { ...carl, agent } : carl, 'trains French', 10)).map((f) => f.text).sort();
    expect(await texts('travel')).toEqual(['Books trains, not planes', 'Speaks French']);
    expect(await texts('billing')).toEqual(['Speaks French']);
    expect(await texts()).toEqual(['Speaks French']);
  });

  it('says what it is', async () => {
    const info = await store.describe();
    expect(info.kind).toBe(kind.startsWith('embedded') ? 'embedded' : 'postgres');
    // pgvector: PGlite has it; Debian's PostgreSQL does not.
    expect(info.vectors).toBe(kind.startsWith('embedded'));
    expect(info.facts).toBeGreaterThan(0);
  });
});

it("the embedded store is one process's: a second opening of its directory says who holds it and what to do", async () => {
  const held = join(dir, 'held');
  const first = await openMemoryStore({ dir: held });
  try {
    // Another process's lock (this test's parent, alive).
    const { writeFileSync } = await import('node:fs');
    writeFileSync(join(held, 'durable-agents.lock'), String(process.ppid));
    await expect(openMemoryStore({ dir: held })).rejects.toThrow(
      /in use by another process \(pid \d+\).*AGENT_MEMORY_URL/,
    );
  } finally {
    await first.close();
  }
});

it('a PostgreSQL that is not there is named, without its password', async () => {
  await expect(openMemoryStore({ url: 'postgres://me:secret@127.0.0.1:1/db' })).rejects.toThrow(
    /cannot reach the memory database at postgres:\/\/me:\*\*\*@127\.0\.0\.1:1\/db \(AGENT_MEMORY_URL\)/,
  );
});

it("recalls by meaning through a provider's embeddings endpoint (the test kit's scripted server), where full text finds nothing", async () => {
  const server = await startOpenAICompatibleServer(() => ({ content: 'unused' }));
  // As a worker configures it: AGENT_EMBEDDING_MODEL, on the OpenAI-compatible endpoint of OPENAI_BASE_URL.
  const env = { AGENT_MEMORY_DIR: join(dir, 'vectors'), OPENAI_BASE_URL: server.baseURL, OPENAI_API_KEY: 'test' };
  const access = memorySettings(
    undefined,
    { ...env, AGENT_EMBEDDING_MODEL: 'openai:text-embedding-3-small' },
    modelConfigFromEnv(env),
  );
  expect(access.where).toBe(join(dir, 'vectors'));
  const store = await access.store();
  try {
    expect((await store.describe()).vectors).toBe(true);
    const scope = { user: 'vera' };
    await store.remember(scope, { text: 'Has the cat insured' }, 'v1');
    await store.remember(scope, { text: 'Walks a dog daily' }, 'v2');
    // "the" is a stop word to full text (no match) and the newest fact would fill in without
    // vectors; the embeddings rank the fact that shares the word first.
    expect((await store.recall(scope, 'the', 1)).map((f) => f.text)).toEqual(['Has the cat insured']);
  } finally {
    await access.close();
    await server.close();
  }
  // Another provider's model is named with the way to give it.
  expect(() =>
    memorySettings(undefined, { ...env, AGENT_EMBEDDING_MODEL: 'cohere:embed-v4' }, modelConfigFromEnv(env)),
  ).toThrow(
    /give any other provider's as an AI SDK embedding model: new AgentsPlugin\(\{ memory: \{ embeddings \} \}\)/,
  );
  expect(() => memorySettings(undefined, { AGENT_MEMORY_URL: 'mysql://x' }, modelConfigFromEnv(env))).toThrow(
    /^AGENT_MEMORY_URL must be a PostgreSQL URL/,
  );
});
