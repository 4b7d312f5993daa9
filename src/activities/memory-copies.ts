import { randomBytes } from 'node:crypto';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { forgottenFacts } from '../core/conversation/forgetting';
import type { MemoryDeletion } from '../core/facts/fact';
import { memoryForgottenSignal } from '../contracts/definitions';
import type { FactHolder } from '../memory-store/memory-store';

/** At most this many workflows are told at once: a user with years of conversations has many. */
const AT_ONCE = 16;

/**
 * A deletion of memory reaching the copies of the deleted facts that workflows hold (see
 * `forgetQuotes`): each open one is told which facts to take out of its messages (the
 * `memoryForgotten` signal, with the facts' fingerprints, not their words; a signal needs no
 * worker to be up, the workflow takes it on its next task). Closed ones cannot change: they are named in the deletion's record. Told before the
 * store deletes, since afterwards nothing says where the facts went; telling twice (a retried
 * deletion) changes nothing more.
 */
export async function tellHolders(
  client: Client,
  holders: readonly FactHolder[],
  at: string,
): Promise<NonNullable<MemoryDeletion['copies']>> {
  const byWorkflow = new Map<string, Array<{ text: string; ref?: string }>>();
  for (const h of holders) {
    const facts = byWorkflow.get(h.workflowId) ?? [];
    if (!facts.some((f) => f.text === h.text && f.ref === h.ref))
      facts.push({ text: h.text, ...(h.ref ? { ref: h.ref } : {}) });
    byWorkflow.set(h.workflowId, facts);
  }
  // Told by fingerprint, never by text: what a workflow is told stays in its history.
  const seed = randomBytes(8).toString('hex');
  const told: string[] = [];
  const closed: string[] = [];
  const ids = [...byWorkflow.keys()].sort();
  for (let i = 0; i < ids.length; i += AT_ONCE) {
    await Promise.all(
      ids.slice(i, i + AT_ONCE).map(async (id) => {
        try {
          await client.workflow
            .getHandle(id)
            .signal(memoryForgottenSignal, forgottenFacts(byWorkflow.get(id)!, at, seed));
          told.push(id);
        } catch (e) {
          if (!(e instanceof WorkflowNotFoundError)) throw e;
          closed.push(id);
        }
      }),
    );
  }
  return { told: told.sort(), closed: closed.sort() };
}
