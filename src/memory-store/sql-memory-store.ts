import { randomUUID } from 'node:crypto';
import { fuseRankings, type Fact, type NewFact } from '../core/facts/fact';
import type { MemoryFilter, MemoryScope } from '../core/facts/memory-scope';
import type { Embedder, FactHolder, MemoryDeletion, MemoryStore, MemoryStoreInfo } from './memory-store';
import type { SqlClient } from './sql-client';

/**
 * The memory store in SQL, one implementation for PGlite and PostgreSQL. Full text is
 * PostgreSQL's own (a generated `tsvector` with a GIN index); vectors are pgvector's, when the
 * database has it and an embedder is configured; the two rankings are fused (see fuseRankings).
 * Every query is scoped by (tenant, user, agent), which an index leads with, so a recall reads
 * one user's facts however many users the store holds.
 */
export class SqlMemoryStore implements MemoryStore {
  private vectors = false;

  private constructor(
    private readonly db: SqlClient,
    private readonly kind: MemoryStoreInfo['kind'],
    private readonly where: string,
    private readonly embedder?: Embedder,
  ) {}

  /** The store in `db`, its tables created if they are not there yet. */
  static async open(
    db: SqlClient,
    kind: MemoryStoreInfo['kind'],
    where: string,
    embedder?: Embedder,
  ): Promise<SqlMemoryStore> {
    const store = new SqlMemoryStore(db, kind, where, embedder);
    await store.migrate();
    return store;
  }

  private async migrate(): Promise<void> {
    await this.db.exec(SCHEMA);
    // pgvector where the server has it: PGlite always; a PostgreSQL server with the extension
    // installed (CREATE EXTENSION needs it on disk, and the right to create it).
    try {
      await this.db.exec('CREATE EXTENSION IF NOT EXISTS vector');
      await this.db.exec('ALTER TABLE agent_memory_facts ADD COLUMN IF NOT EXISTS embedding vector');
      this.vectors = true;
    } catch {
      this.vectors = false;
    }
  }

  async remember(scope: MemoryScope, fact: NewFact, key: string): Promise<Fact> {
    const [vector] = await this.embed([fact.text]);
    const id = `f_${randomUUID().replace(/-/g, '').slice(0, 20)}`;
    const { rows } = await this.db.query<Row>(
      `INSERT INTO agent_memory_facts (id, tenant, user_id, agent, text, value, confidence, source, idempotency_key${vector ? ', embedding, embedding_model' : ''})
       SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9${vector ? ', $10::vector, $11' : ''}
       WHERE NOT EXISTS (SELECT 1 FROM agent_memory_tombstones WHERE idempotency_key = $9)
       ON CONFLICT (idempotency_key) DO NOTHING
       RETURNING ${COLUMNS}`,
      [
        id,
        scope.tenant ?? '',
        scope.user,
        scope.agent ?? '',
        fact.text.trim(),
        fact.value === undefined ? null : JSON.stringify(fact.value),
        fact.confidence ?? 1,
        fact.source ? JSON.stringify(fact.source) : null,
        key,
        ...(vector ? [toVector(vector), this.embedder!.model] : []),
      ],
    );
    if (rows[0]) return factOf(rows[0]);
    // The same write again (a retry): the fact the first one stored, or its tombstone.
    const again = await this.db.query<Row>(`SELECT ${COLUMNS} FROM agent_memory_facts WHERE idempotency_key = $1`, [
      key,
    ]);
    if (again.rows[0]) return factOf(again.rows[0]);
    throw new MemoryDeletedError();
  }

  async recall(scope: MemoryScope, query: string, limit: number): Promise<Fact[]> {
    const where = `tenant = $1 AND user_id = $2 AND agent IN ('', $3)`;
    const params = [scope.tenant ?? '', scope.user, scope.agent ?? ''];
    // Any of the query's words (plainto_tsquery would ask for all of them: a question rarely has
    // every word of the fact that answers it), stemmed and without stop words.
    const text = await this.db.query<{ id: string }>(
      `SELECT id FROM agent_memory_facts, (SELECT replace(plainto_tsquery('english', $4)::text, '&', '|')::tsquery AS q) s
       WHERE ${where} AND q::text <> '' AND tsv @@ q ORDER BY ts_rank_cd(tsv, q) DESC, updated_at DESC LIMIT $5`,
      [...params, query, limit * 2],
    );
    const lists = [text.rows.map((r) => r.id)];
    const [vector] = query.trim() ? await this.embed([query]) : [];
    if (vector) {
      const near = await this.db.query<{ id: string }>(
        `SELECT id FROM agent_memory_facts WHERE ${where} AND embedding_model = $4
         ORDER BY embedding <=> $5::vector LIMIT $6`,
        [...params, this.embedder!.model, toVector(vector), limit * 2],
      );
      lists.push(near.rows.map((r) => r.id));
    }
    let ids = fuseRankings(lists, limit);
    if (ids.length < limit) {
      // Too few matches: the newest facts fill the rest (a user with few facts gets them all).
      const recent = await this.db.query<{ id: string }>(
        `SELECT id FROM agent_memory_facts WHERE ${where} ORDER BY updated_at DESC LIMIT $4`,
        [...params, limit],
      );
      ids = [...ids, ...recent.rows.map((r) => r.id).filter((id) => !ids.includes(id))].slice(0, limit);
    }
    if (!ids.length) return [];
    const { rows } = await this.db.query<Row>(`SELECT ${COLUMNS} FROM agent_memory_facts WHERE id = ANY($1)`, [ids]);
    const byId = new Map(rows.map((r) => [r.id, factOf(r)]));
    return ids.map((id) => byId.get(id)).filter((f): f is Fact => f !== undefined);
  }

  async update(scope: MemoryScope, id: string, text: string): Promise<boolean> {
    const [vector] = await this.embed([text]);
    const { rows } = await this.db.query(
      `UPDATE agent_memory_facts SET text = $5, updated_at = now()${vector ? ', embedding = $6::vector, embedding_model = $7' : ''}
       WHERE tenant = $1 AND user_id = $2 AND agent IN ('', $3) AND id = $4 RETURNING id`,
      [
        scope.tenant ?? '',
        scope.user,
        scope.agent ?? '',
        id,
        text.trim(),
        ...(vector ? [toVector(vector), this.embedder!.model] : []),
      ],
    );
    return rows.length > 0;
  }

  async forget(scope: MemoryScope, ids: readonly string[]): Promise<string[]> {
    if (!ids.length) return [];
    await this.db.query(
      `INSERT INTO agent_memory_tombstones (idempotency_key)
       SELECT idempotency_key FROM agent_memory_facts
       WHERE tenant = $1 AND user_id = $2 AND agent IN ('', $3) AND id = ANY($4) AND idempotency_key IS NOT NULL
       ON CONFLICT DO NOTHING`,
      [scope.tenant ?? '', scope.user, scope.agent ?? '', [...ids]],
    );
    const { rows } = await this.db.query<{ id: string }>(
      `DELETE FROM agent_memory_facts WHERE tenant = $1 AND user_id = $2 AND agent IN ('', $3) AND id = ANY($4) RETURNING id`,
      [scope.tenant ?? '', scope.user, scope.agent ?? '', [...ids]],
    );
    return rows.map((r) => r.id);
  }

  async list(filter: MemoryFilter, options: { limit?: number; after?: string } = {}): Promise<Fact[]> {
    const { sql, params } = filterSql(filter);
    const after = options.after
      ? ` AND (created_at, id) < (SELECT created_at, id FROM agent_memory_facts WHERE id = $${params.length + 1})`
      : '';
    const { rows } = await this.db.query<Row>(
      `SELECT ${COLUMNS} FROM agent_memory_facts WHERE ${sql}${after} ORDER BY created_at DESC, id DESC LIMIT ${Math.max(1, Math.min(options.limit ?? 1000, 10_000))}`,
      options.after ? [...params, options.after] : params,
    );
    return rows.map(factOf);
  }

  async get(filter: MemoryFilter, id: string): Promise<Fact | undefined> {
    const { sql, params } = filterSql(filter);
    const { rows } = await this.db.query<Row>(
      `SELECT ${COLUMNS} FROM agent_memory_facts WHERE ${sql} AND id = $${params.length + 1}`,
      [...params, id],
    );
    return rows[0] ? factOf(rows[0]) : undefined;
  }

  async holders(filter: MemoryFilter): Promise<FactHolder[]> {
    const { sql, params } = filterSql(filter);
    const { rows } = await this.db.query<{ text: string; workflow_id: string; ref: string | null }>(
      `SELECT text, source->>'workflowId' AS workflow_id, source->>'ref' AS ref FROM agent_memory_facts
         WHERE ${sql} AND source->>'workflowId' IS NOT NULL
       UNION ALL
       SELECT text, c.workflow_id, NULL FROM agent_memory_facts JOIN agent_memory_copies c ON c.fact_id = id WHERE ${sql}`,
      params,
    );
    return rows.map((r) => ({ workflowId: r.workflow_id, text: r.text, ...(r.ref ? { ref: r.ref } : {}) }));
  }

  async noteCopies(ids: readonly string[], workflowId: string): Promise<void> {
    if (!ids.length) return;
    await this.db.query(
      `INSERT INTO agent_memory_copies (fact_id, workflow_id) SELECT unnest($1::text[]), $2 ON CONFLICT DO NOTHING`,
      [ids, workflowId],
    );
  }

  async delete(filter: MemoryFilter, by: string, copies?: MemoryDeletion['copies']): Promise<MemoryDeletion> {
    const { sql, params } = filterSql(filter);
    await this.db.query(
      `DELETE FROM agent_memory_copies WHERE fact_id IN (SELECT id FROM agent_memory_facts WHERE ${sql})`,
      params,
    );
    await this.db.query(
      `INSERT INTO agent_memory_tombstones (idempotency_key)
       SELECT idempotency_key FROM agent_memory_facts WHERE ${sql} AND idempotency_key IS NOT NULL ON CONFLICT DO NOTHING`,
      params,
    );
    const facts = await this.db.query(`DELETE FROM agent_memory_facts WHERE ${sql} RETURNING id`, params);
    const profiles = await this.db.query(`DELETE FROM agent_memory_profiles WHERE ${sql} RETURNING user_id`, params);
    const deletion: MemoryDeletion = {
      at: new Date().toISOString(),
      by,
      ...(filter.tenant !== undefined ? { tenant: filter.tenant } : {}),
      ...(filter.user !== undefined ? { user: filter.user } : {}),
      ...(filter.agent !== undefined ? { agent: filter.agent } : {}),
      facts: facts.rows.length,
      profiles: profiles.rows.length,
      ...(copies ? { copies } : {}),
    };
    await this.db.query(
      `INSERT INTO agent_memory_deletions (deleted_at, by_whom, tenant, user_id, agent, facts, profiles, copies) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [
        deletion.at,
        by,
        filter.tenant ?? null,
        filter.user ?? null,
        filter.agent ?? null,
        deletion.facts,
        deletion.profiles,
        copies ? JSON.stringify(copies) : null,
      ],
    );
    return deletion;
  }

  async deletions(filter: MemoryFilter): Promise<MemoryDeletion[]> {
    const { rows } = await this.db.query<Record<string, unknown>>(
      `SELECT deleted_at, by_whom, tenant, user_id, agent, facts, profiles, copies FROM agent_memory_deletions
       WHERE ($1::text IS NULL OR tenant = $1) AND ($2::text IS NULL OR user_id = $2) ORDER BY deleted_at DESC LIMIT 1000`,
      [filter.tenant ?? null, filter.user ?? null],
    );
    return rows.map((r) => ({
      at: new Date(r.deleted_at as string).toISOString(),
      by: r.by_whom as string,
      ...(r.tenant !== null ? { tenant: r.tenant as string } : {}),
      ...(r.user_id !== null ? { user: r.user_id as string } : {}),
      ...(r.agent !== null ? { agent: r.agent as string } : {}),
      facts: Number(r.facts),
      profiles: Number(r.profiles),
      ...(r.copies ? { copies: json(r.copies) as MemoryDeletion['copies'] } : {}),
    }));
  }

  async profile(scope: MemoryScope): Promise<Record<string, unknown> | undefined> {
    const { rows } = await this.db.query<{ profile: unknown }>(
      `SELECT profile FROM agent_memory_profiles WHERE tenant = $1 AND user_id = $2 AND agent = $3`,
      [scope.tenant ?? '', scope.user, scope.agent ?? ''],
    );
    return rows[0] ? (json(rows[0].profile) as Record<string, unknown>) : undefined;
  }

  async setProfile(scope: MemoryScope, profile: Record<string, unknown>): Promise<void> {
    await this.db.query(
      `INSERT INTO agent_memory_profiles (tenant, user_id, agent, profile, updated_at) VALUES ($1, $2, $3, $4, now())
       ON CONFLICT (tenant, user_id, agent) DO UPDATE SET profile = EXCLUDED.profile, updated_at = now()`,
      [scope.tenant ?? '', scope.user, scope.agent ?? '', JSON.stringify(profile)],
    );
  }

  async describe(): Promise<MemoryStoreInfo> {
    const { rows } = await this.db.query<{ n: string | number }>('SELECT count(*) AS n FROM agent_memory_facts');
    return {
      kind: this.kind,
      where: this.where,
      vectors: this.vectors && this.embedder !== undefined,
      facts: Number(rows[0]?.n ?? 0),
    };
  }

  close(): Promise<void> {
    return this.db.close();
  }

  private async embed(texts: string[]): Promise<(number[] | undefined)[]> {
    if (!this.vectors || !this.embedder) return texts.map(() => undefined);
    return this.embedder.embed(texts);
  }
}

/** A retried `remember` whose fact was deleted meanwhile (`memory delete`, `forget`): it stays deleted. */
export class MemoryDeletedError extends Error {
  constructor() {
    super('this fact was deleted (memory delete, or forget) after it was first stored; it stays deleted');
    this.name = 'MemoryDeletedError';
  }
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS agent_memory_facts (
  id text PRIMARY KEY,
  tenant text NOT NULL DEFAULT '',
  user_id text NOT NULL,
  agent text NOT NULL DEFAULT '',
  text text NOT NULL,
  value jsonb,
  confidence real NOT NULL DEFAULT 1,
  source jsonb,
  idempotency_key text UNIQUE,
  embedding_model text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', text)) STORED
);
CREATE INDEX IF NOT EXISTS agent_memory_facts_scope ON agent_memory_facts (tenant, user_id, agent, updated_at);
CREATE INDEX IF NOT EXISTS agent_memory_facts_tsv ON agent_memory_facts USING gin (tsv);
CREATE TABLE IF NOT EXISTS agent_memory_profiles (
  tenant text NOT NULL DEFAULT '',
  user_id text NOT NULL,
  agent text NOT NULL DEFAULT '',
  profile jsonb NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant, user_id, agent)
);
CREATE TABLE IF NOT EXISTS agent_memory_tombstones (idempotency_key text PRIMARY KEY);
CREATE TABLE IF NOT EXISTS agent_memory_deletions (
  deleted_at timestamptz NOT NULL,
  by_whom text NOT NULL,
  tenant text,
  user_id text,
  agent text,
  facts integer NOT NULL,
  profiles integer NOT NULL
);
ALTER TABLE agent_memory_deletions ADD COLUMN IF NOT EXISTS copies jsonb;
CREATE TABLE IF NOT EXISTS agent_memory_copies (
  fact_id text NOT NULL,
  workflow_id text NOT NULL,
  PRIMARY KEY (fact_id, workflow_id)
);
`;

const COLUMNS = 'id, tenant, user_id, agent, text, value, confidence, source, created_at, updated_at';

interface Row {
  id: string;
  tenant: string;
  user_id: string;
  agent: string;
  text: string;
  value: unknown;
  confidence: number;
  source: unknown;
  created_at: Date | string;
  updated_at: Date | string;
}

function factOf(r: Row): Fact {
  const value = json(r.value);
  const source = json(r.source);
  return {
    id: r.id,
    ...(r.tenant ? { tenant: r.tenant } : {}),
    user: r.user_id,
    ...(r.agent ? { agent: r.agent } : {}),
    text: r.text,
    ...(value !== null && value !== undefined ? { value } : {}),
    confidence: Number(r.confidence),
    ...(source ? { source: source as Fact['source'] } : {}),
    createdAt: new Date(r.created_at).toISOString(),
    updatedAt: new Date(r.updated_at).toISOString(),
  };
}

/** jsonb as the driver gives it: parsed (node-postgres, PGlite) or, for some types, text. */
function json(v: unknown): unknown {
  return typeof v === 'string' ? JSON.parse(v) : v;
}

function toVector(v: number[]): string {
  return `[${v.join(',')}]`;
}

/** The WHERE clause of a person's filter: each field given narrows; an absent tenant is every tenant. */
function filterSql(filter: MemoryFilter): { sql: string; params: unknown[] } {
  const clauses: string[] = ['TRUE'];
  const params: unknown[] = [];
  const add = (column: string, value: string | undefined) => {
    if (value === undefined) return;
    params.push(value);
    clauses.push(`${column} = $${params.length}`);
  };
  add('tenant', filter.tenant);
  add('user_id', filter.user);
  add('agent', filter.agent);
  return { sql: clauses.join(' AND '), params };
}
