import { defineCommand } from '../command';
import { parseTenantsArgs, TENANTS_USAGE } from '../tenants-command';
import { JSON_HELP } from './conversation-kinds';

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

/** The commands of "Tenants". */
export const TENANT_COMMANDS = [tenantsCommand];
