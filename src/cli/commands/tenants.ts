import { defineCommand } from '../command';
import { parseTenantsArgs, TENANTS_USAGE } from '../tenants-command';
import { JSON_HELP } from './conversation-kinds';
import { CREDENTIALS_USAGE, parseCredentialsArgs } from '../credentials-command';
import { MEMORY_USAGE, parseMemoryArgs } from '../memory-command';

/** `tenants`: budgets, usage and shares of the customers one fleet serves. */
export const tenantsCommand = defineCommand({
  name: 'tenants',
  group: 'Tenants',
  synopsis: 'tenants budget|usage|weight',
  summary: "tenants' budgets, usage and fair shares",
  page: () => `${TENANTS_USAGE}

  A tenant is the customer runs work for (--tenant on run, send and schedule create; a token of the
  HTTP API bound to it). Its budget holds across all its runs and every worker: a model call of its
  runs reserves an estimate in the tenant's ledger (a workflow on the agents' task queue) before it
  asks the model, and settles what the reply cost; once the period's spending reaches the budget,
  its runs end budget_exceeded, with the tenant's figures. See docs/production.md, "Tenants".
  budget T --tokens N --per day     at most N tokens a day (UTC); --usd X for dollars (the workers'
                                    price table), both for either; --clear removes the budget
  usage [--tenant T]                what each tenant (or T) spent this period, in flight, and its budget
  weight T W                        T's share of a backed-up task queue (0.001-1000, default 1),
                                    kept on the queue by Temporal; --clear removes it
${JSON_HELP}`,
  parse: (args) => parseTenantsArgs(args),
  run: async (command, { target, io }) => (await import('../tenants-command')).runTenantsCommand(command, target, io),
});

/** `credentials`: tools' API keys per tenant. */
export const credentialsCommand = defineCommand({
  name: 'credentials',
  group: 'Tenants',
  synopsis: 'credentials set|list|delete',
  summary: "tools' API keys per tenant (ctx.credential)",
  talksToTemporal: false,
  page: () => `${CREDENTIALS_USAGE}

  Tools' secrets per customer: a tool reads its run's tenant's with ctx.credential("<name>"); a run
  without a tenant reads those set without --tenant. Kept where the workers read them
  (AGENT_CREDENTIALS, default ~/.durable-agents/credentials.json, mode 0600; encrypted with
  AGENT_ENCRYPTION_KEYS when set), never in a run's history. set reads the secret from stdin.`,
  parse: (args) => parseCredentialsArgs(args),
  run: async (command, { env, io }) => (await import('../credentials-command')).runCredentialsCommand(command, env, io),
});

/** `memory`: what the agents keep about users across conversations; people's control of it. */
export const memoryCommand = defineCommand({
  name: 'memory',
  group: 'Tenants',
  synopsis: 'memory list|show|delete|export',
  summary: 'what agents remember about users: list, show, delete, export',
  page: () => `${MEMORY_USAGE}

  Memory across conversations: facts agents keep about a user (the remember tool, an agent's
  memory: { extract }), recalled in that user's later runs and conversations (--user on run and
  send). Kept by the workers (AGENT_MEMORY_URL, else a PGlite database in AGENT_MEMORY_DIR or
  .durable-agents/memory); these commands reach it through a worker of the task queue.
  list                   facts, newest first (--user, --tenant, --agent narrow; none: every user's)
  show <fact-id>         one fact, with where it came from
  delete --user U        every fact and profile of U (in every tenant, or --tenant T's), for good:
                         a retried write of a deleted fact stays deleted; the deletion is recorded
                         (memory export lists it, and Temporal keeps the memory-delete workflow)
  export --user U        all of it as JSON: facts, profiles, deletions
${JSON_HELP}`,
  parse: (args) => parseMemoryArgs(args),
  run: async (command, { target, io, env }) =>
    (await import('../memory-command')).runMemoryCommand(command, target, io, `cli (${env.USER ?? 'unknown user'})`),
});

/** The commands of "Tenants". */
export const TENANT_COMMANDS = [tenantsCommand, credentialsCommand, memoryCommand];
