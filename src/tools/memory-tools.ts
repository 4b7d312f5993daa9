import { DEFAULT_RECALL_LIMIT, MAX_RECALL_LIMIT, newFactProblem, type Fact } from '../core/facts/fact';
import { FORGET, MEMORY_TOOL_SPECS, RECALL, REMEMBER } from '../core/facts/memory-tools';
import type { MemoryScope } from '../core/facts/memory-scope';
import type { MemoryStore } from '../memory-store/memory-store';
import { MemoryDeletedError } from '../memory-store/sql-memory-store';
import { MemoryPackageMissing } from '../memory-store/sql-client';
import { defineJsonSchemaTool, type AnyToolDefinition, type ToolContext } from './define-tool';
import { ToolError } from './tool-error';

/**
 * The memory tools (`remember`, `recall`, `forget`), bound to a worker's store. They run as
 * activities like any tool, scoped to the run's tenant and user (`ctx.tenant`, `ctx.user`), and
 * `remember` writes under the call's idempotency key: a call retried after its worker died finds
 * the fact the first attempt stored instead of storing it twice.
 */
export function memoryToolDefinitions(open: () => Promise<MemoryStore>): AnyToolDefinition[] {
  // A store that cannot be opened for a reason a retry will not change is the model's to report.
  const store = () =>
    open().catch((e: Error) => {
      if (e instanceof MemoryPackageMissing || /in use by another process/.test(e.message))
        throw new ToolError(`memory is not available on this worker: ${e.message}`);
      throw e;
    });
  const scopeOf = (ctx: ToolContext): MemoryScope => {
    if (ctx.user === undefined)
      throw new ToolError(
        'memory is kept per user and this run has none: it must be started with a user ("user" in its input, --user on the command line)',
      );
    return { ...(ctx.tenant !== undefined ? { tenant: ctx.tenant } : {}), user: ctx.user };
  };
  const shown = (f: Fact) => ({
    id: f.id,
    text: f.text,
    ...(f.value !== undefined ? { value: f.value } : {}),
    date: f.updatedAt.slice(0, 10),
  });
  return [
    defineJsonSchemaTool({
      name: REMEMBER,
      ...MEMORY_TOOL_SPECS[REMEMBER],
      execute: async (args, ctx) => {
        const scope = scopeOf(ctx);
        const fact = {
          text: String(args.text ?? ''),
          value: args.value,
          confidence: args.confidence as number | undefined,
        };
        const problem = newFactProblem(fact);
        if (problem) throw new ToolError(problem);
        try {
          const kept = await (
            await store()
          ).remember(
            scope,
            { ...fact, source: { workflowId: ctx.workflowId, runId: ctx.runId, ref: ctx.toolCallId } },
            `tool:${ctx.idempotencyKey}`,
          );
          return { remembered: shown(kept) };
        } catch (e) {
          if (e instanceof MemoryDeletedError) throw new ToolError(e.message);
          throw e;
        }
      },
    }),
    defineJsonSchemaTool({
      name: RECALL,
      ...MEMORY_TOOL_SPECS[RECALL],
      execute: async (args, ctx) => {
        const asked = typeof args.limit === 'number' ? args.limit : DEFAULT_RECALL_LIMIT;
        const limit = Math.max(1, Math.min(MAX_RECALL_LIMIT, Math.floor(asked)));
        const kept = await store();
        const facts = await kept.recall(scopeOf(ctx), String(args.query ?? ''), limit);
        // The result stays in the run's messages: a deletion of these facts must reach it there.
        await kept.noteCopies(
          facts.map((f) => f.id),
          ctx.workflowId,
        );
        return { facts: facts.map(shown) };
      },
    }),
    defineJsonSchemaTool({
      name: FORGET,
      ...MEMORY_TOOL_SPECS[FORGET],
      execute: async (args, ctx) => {
        const ids = (Array.isArray(args.ids) ? args.ids : []).filter((id): id is string => typeof id === 'string');
        if (!ids.length) throw new ToolError('"ids" must list the ids of the facts to forget (recall gives them)');
        const forgotten = await (await store()).forget(scopeOf(ctx), ids);
        return {
          forgotten,
          ...(forgotten.length < ids.length ? { unknown: ids.filter((id) => !forgotten.includes(id)) } : {}),
        };
      },
    }),
  ];
}
