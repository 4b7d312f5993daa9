import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { BlobStore } from '../storage/blob-store';
import type { ExternalStorage } from '@temporalio/common';
import { z } from 'zod';
import { ApplicationFailure } from '@temporalio/common';
import { EXTRACTION_INSTRUCTIONS, extractionRequest, parseFactChanges } from '../core/facts/fact-extraction';
import { newFactProblem, recallBlock, type MemoryDeletion } from '../core/facts/fact';
import { MAX_MEMORY_PAGE, memoryFilterProblem, type MemoryScope } from '../core/facts/memory-scope';
import type { MemoryAdminRequest, MemoryAdminResult, MemoryExport } from '../contracts/memory-admin';
import type {
  ExtractMemoryInput,
  ExtractedMemory,
  MemoryScopeInput,
  RecallMemoryInput,
  RecalledMemory,
} from '../contracts/activity-interface';
import type { ChatModel } from '../models/chat-model';
import type { ModelConfig } from '../models/model-config';
import type { MemoryAccess, MemoryStore } from '../memory-store/memory-store';
import { MemoryDeletedError } from '../memory-store/sql-memory-store';
import { MemoryPackageMissing } from '../memory-store/sql-client';
import { keepHeartbeating } from './heartbeat';
import { tellHolders } from './memory-copies';
import { pruneQueryAnswers, purgeReads } from './memory-purge';
import { purgeClosed } from '../storage/workflow-purge';
import { modelCallFailure } from './model-failure';
import type { ModelGate } from './model-gate';
import { inRunScope } from './run-scope';

/** Facts an extraction reads beside the exchange (those that bear on it most): what it may update or retire. */
const EXTRACTION_CONTEXT_FACTS = 20;
/** The longest reply an extraction asks for, in tokens: a few short facts. */
const EXTRACTION_MAX_TOKENS = 800;

function scopeOf(input: MemoryScopeInput): MemoryScope {
  return {
    ...(input.tenant !== undefined ? { tenant: input.tenant } : {}),
    user: input.user,
    ...(input.agent !== undefined ? { agent: input.agent } : {}),
  };
}

/** The store, or a failure that says where it is and why it could not be opened (retried: a database restarting comes back). */
async function storeOf(memory: MemoryAccess | undefined) {
  if (!memory) throw ApplicationFailure.nonRetryable('this worker keeps no memory', 'Memory.NotConfigured');
  try {
    return await memory.store();
  } catch (e) {
    throw ApplicationFailure.create({
      message: `the memory store (${memory.where}) cannot be opened: ${(e as Error).message}`,
      type: 'Memory.Unavailable',
      // A package to install, or a directory another process holds: retrying will not change it.
      nonRetryable: e instanceof MemoryPackageMissing || /in use by another process/.test((e as Error).message),
    });
  }
}

/** Builds `recallMemory`: the user's facts for the turn's message, and their profile, as one block. */
export function createRecallMemory(deps: {
  memory?: MemoryAccess;
  /** The model gate its embeddings go through, for the run's tenant. */
  gate?: ModelGate;
}) {
  return async function recallMemory(input: RecallMemoryInput): Promise<RecalledMemory> {
    const store = await storeOf(deps.memory);
    const scope = scopeOf(input);
    return inRunScope(deps.gate, input.tenant, async () => {
      const [facts, profile] = await Promise.all([store.recall(scope, input.query, input.limit), store.profile(scope)]);
      return { text: recallBlock(facts, profile), facts: facts.map((f) => f.id) };
    });
  };
}

/**
 * Builds `extractMemory`: one model call over the turn's exchange and the facts that bear on it,
 * then the proposed changes, each under a key of the turn's (`<workflow>:<turn>:<n>`), so a
 * retried activity finds what an earlier attempt kept.
 */
export function createExtractMemory(deps: {
  memory?: MemoryAccess;
  config: ModelConfig;
  model: ChatModel;
  /** The seam every model request goes through: an extraction of a tenant's run reserves, waits its turn and is charged like an agent step. */
  gate: ModelGate;
}) {
  return async function extractMemory(input: ExtractMemoryInput): Promise<ExtractedMemory> {
    if (!deps.config.configured)
      throw ApplicationFailure.nonRetryable('no LLM is configured on this worker', 'ModelCall.NotConfigured');
    return inRunScope(deps.gate, input.tenant, () => extract(input));
  };

  async function extract(input: ExtractMemoryInput): Promise<ExtractedMemory> {
    const store = await storeOf(deps.memory);
    const scope = scopeOf(input);
    const query = input.exchange.map((m) => m.text).join('\n');
    const kept = await store.recall(scope, query, EXTRACTION_CONTEXT_FACTS);
    const current = input.profile ? await store.profile(scope) : undefined;
    const stop = keepHeartbeating();
    let reply;
    const route = deps.model.route(input.settings?.model);
    try {
      // The run's model without its thinking or fallbacks: a short JSON answer.
      const { thinking: _thinking, fallbackModels: _fallbacks, ...settings } = input.settings ?? {};
      const sent = [
        { role: 'system' as const, content: EXTRACTION_INSTRUCTIONS },
        {
          role: 'user' as const,
          content: extractionRequest(
            kept,
            input.exchange,
            input.profile ? { schema: input.profile, ...(current ? { current } : {}) } : undefined,
          ),
        },
      ];
      const signal = Context.current().cancellationSignal;
      reply = await deps.gate.call(
        { route, messages: sent, maxTokens: EXTRACTION_MAX_TOKENS, tenant: input.tenant, signal },
        () =>
          deps.model.generate(sent, {
            route,
            settings: { ...settings, maxTokens: EXTRACTION_MAX_TOKENS },
            signal,
            ...(input.timeoutMs ? { deadlineMs: input.timeoutMs } : {}),
          }),
      );
    } catch (err) {
      throw modelCallFailure(err);
    } finally {
      stop();
    }
    const changes = parseFactChanges(reply.content ?? '', new Set(kept.map((f) => f.id)));
    const added: string[] = [];
    for (const [i, fact] of changes.add.entries()) {
      if (newFactProblem(fact)) continue;
      try {
        const stored = await store.remember(
          scope,
          { ...fact, source: { workflowId: input.workflowId, runId: input.runId, ref: `turn:${input.turn}` } },
          `extract:${input.workflowId}:${input.turn}:${i}`,
        );
        added.push(stored.id);
      } catch (e) {
        // Deleted (by a person) since an earlier attempt kept it: it stays deleted.
        if (!(e instanceof MemoryDeletedError)) throw e;
      }
    }
    const updated: string[] = [];
    for (const u of changes.update) if (await store.update(scope, u.id, u.text)) updated.push(u.id);
    const retired = changes.retire.length ? await store.forget(scope, changes.retire) : [];
    const profile =
      input.profile && changes.profile
        ? await updateProfile(store, scope, input.profile, current, changes.profile)
        : undefined;
    return { added, updated, retired, ...(profile ? { profile } : {}), usage: reply.usage, model: route.name };
  }
}

/**
 * Working memory: the profile with the extraction's changes, kept when it is valid under the
 * agent's schema (a change the schema refuses is dropped, not half-applied); the changed fields.
 */
async function updateProfile(
  store: MemoryStore,
  scope: MemoryScope,
  schema: Record<string, unknown>,
  current: Record<string, unknown> | undefined,
  changes: Record<string, unknown>,
): Promise<string[] | undefined> {
  const merged = { ...current, ...changes };
  const checked = z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]).safeParse(merged);
  if (!checked.success) return undefined;
  await store.setProfile(scope, checked.data as Record<string, unknown>);
  return Object.keys(changes);
}

/** Builds `administerMemory`: a person's list, show, delete or export, on the worker's store. */
export function createAdministerMemory(deps: {
  memory?: MemoryAccess;
  client?: Client;
  payloadStorage?: ExternalStorage;
  /** Where the workspace states of the workflows a purge removes are. */
  blobs?: BlobStore;
}) {
  return async function administerMemory(request: MemoryAdminRequest): Promise<MemoryAdminResult> {
    const problem = memoryFilterProblem(request.filter, request.op === 'show');
    if (problem) throw ApplicationFailure.nonRetryable(problem, 'Memory.InvalidRequest');
    const store = await storeOf(deps.memory);
    switch (request.op) {
      case 'list': {
        const limit = Math.max(1, Math.min(request.limit ?? 100, MAX_MEMORY_PAGE));
        const facts = await store.list(request.filter, {
          limit: limit + 1,
          ...(request.after ? { after: request.after } : {}),
        });
        return {
          op: 'list',
          facts: facts.slice(0, limit),
          ...(facts.length > limit ? { next: facts[limit - 1].id } : {}),
        };
      }
      case 'show': {
        const fact = await store.get(request.filter, request.id);
        return { op: 'show', ...(fact ? { fact } : {}) };
      }
      case 'delete': {
        const holders = await store.holders(request.filter);
        const client = deps.client ?? Context.current().client;
        const told = await tellHolders(client, holders, new Date().toISOString());
        // Closed workflows cannot change: with `purge`, they go, with what they put in the payload
        // store; so do the closed reads that returned the facts (memory list, show, export) and
        // the answers to queries the open ones stored (a transcript read before the deletion).
        let copies: MemoryDeletion['copies'] = told;
        if (request.purge) {
          const closed = await purgeClosed(client, told.closed, deps.payloadStorage, deps.blobs);
          const reads = await purgeReads(client, request.filter, deps.payloadStorage);
          const answers = await pruneQueryAnswers(client, told.told, deps.payloadStorage);
          copies = {
            ...told,
            purged: [...closed.purged, ...reads.purged],
            payloads: closed.payloads + reads.payloads + answers,
          };
        }
        return { op: 'delete', deletion: await store.delete(request.filter, request.by, copies) };
      }
      case 'export': {
        const facts = await store.list(request.filter, { limit: 10_000 });
        const scopes = new Map<string, MemoryScope>();
        for (const f of facts) scopes.set(JSON.stringify([f.tenant, f.user, f.agent]), f);
        if (request.filter.user !== undefined)
          scopes.set(JSON.stringify([request.filter.tenant, request.filter.user, request.filter.agent]), {
            ...request.filter,
            user: request.filter.user,
          });
        const profiles: MemoryExport['profiles'] = [];
        for (const scope of scopes.values()) {
          const profile = await store.profile(scope);
          if (profile)
            profiles.push({
              ...(scope.tenant ? { tenant: scope.tenant } : {}),
              user: scope.user,
              ...(scope.agent ? { agent: scope.agent } : {}),
              profile,
            });
        }
        return {
          op: 'export',
          export: {
            exportedAt: new Date().toISOString(),
            filter: request.filter,
            facts,
            profiles,
            deletions: await store.deletions(request.filter),
          },
        };
      }
    }
  };
}
