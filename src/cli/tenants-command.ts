import { readTenantUsage, listTenantUsage, setTenantBudget, setTenantWeight } from '../client/tenants';
import { fairnessWeightProblem, tenantProblem } from '../core/fleet/tenants';
import type { TenantBudget, TenantUsage } from '../core/fleet/tenant-ledger';
import { commandName } from './command-name';
import { parseFlags, UsageError } from './option-flags';
import { inSession, type CommandTarget } from './session';
import { tableText } from './table';

/** The usage lines of `tenants`. */
export const TENANTS_USAGE = `usage: ${commandName()} tenants budget <tenant> (--tokens N | --usd X) --per day|month [--json]
       ${commandName()} tenants budget <tenant> --clear [--json]
       ${commandName()} tenants usage [--tenant T] [--json]
       ${commandName()} tenants weight <tenant> <weight> | --clear`;

/** What `tenants` was asked. */
export type TenantsCommand =
  | { action: 'budget'; tenant: string; budget?: TenantBudget; json: boolean }
  | { action: 'usage'; tenant?: string; json: boolean }
  | { action: 'weight'; tenant: string; weight?: number; json: boolean };

/** Reads `tenants ...`; every mistake is a {@link UsageError}. */
export function parseTenantsArgs(argv: string[]): TenantsCommand {
  const [action, ...rest] = argv;
  const { values, positionals } = parseFlags(rest, {
    json: { type: 'boolean' },
    tokens: { type: 'string' },
    usd: { type: 'string' },
    per: { type: 'string' },
    clear: { type: 'boolean' },
    tenant: { type: 'string' },
  });
  const json = values.json ?? false;
  const tenantArg = (name: string | undefined, flag = '<tenant>') => {
    if (name === undefined) throw new UsageError(`tenants ${action} expects ${flag}`);
    const problem = tenantProblem(name, flag);
    if (problem) throw new UsageError(problem);
    return name;
  };
  switch (action) {
    case 'budget': {
      if (positionals.length !== 1) throw new UsageError('tenants budget expects one <tenant>');
      const tenant = tenantArg(positionals[0]);
      if (values.clear) {
        if (values.tokens !== undefined || values.usd !== undefined || values.per !== undefined)
          throw new UsageError('--clear takes no --tokens, --usd or --per');
        return { action, tenant, json };
      }
      if (values.per !== 'day' && values.per !== 'month')
        throw new UsageError('tenants budget needs --per day or --per month');
      if (values.tokens === undefined && values.usd === undefined)
        throw new UsageError('tenants budget needs --tokens N or --usd X (or both), or --clear');
      const budget: TenantBudget = { per: values.per };
      if (values.tokens !== undefined) {
        if (!/^\d+$/.test(values.tokens) || Number(values.tokens) < 1)
          throw new UsageError(`--tokens must be a whole number >= 1, got "${values.tokens}"`);
        budget.tokens = Number(values.tokens);
      }
      if (values.usd !== undefined) {
        if (!/^\d+(\.\d+)?$/.test(values.usd) || Number(values.usd) <= 0)
          throw new UsageError(`--usd must be a number of dollars > 0, got "${values.usd}"`);
        budget.usd = Number(values.usd);
      }
      return { action, tenant, budget, json };
    }
    case 'usage': {
      if (positionals.length > 0) throw new UsageError('tenants usage takes no arguments (--tenant T for one tenant)');
      return values.tenant === undefined
        ? { action, json }
        : { action, tenant: tenantArg(values.tenant, '--tenant'), json };
    }
    case 'weight': {
      const tenant = tenantArg(positionals[0]);
      if (values.clear) {
        if (positionals.length !== 1) throw new UsageError('tenants weight <tenant> --clear takes no weight');
        return { action, tenant, json };
      }
      if (positionals.length !== 2) throw new UsageError('tenants weight expects <tenant> and a <weight> (or --clear)');
      const weight = Number(positionals[1]);
      const problem = fairnessWeightProblem(Number.isNaN(weight) ? positionals[1] : weight);
      if (problem) throw new UsageError(problem);
      return { action, tenant, weight, json };
    }
    default:
      throw new UsageError(
        action === undefined
          ? 'tenants expects budget, usage or weight'
          : `unknown tenants action "${action}": budget, usage or weight`,
      );
  }
}

/** Runs `tenants ...`. */
export async function runTenantsCommand(
  cmd: TenantsCommand,
  target: CommandTarget,
  io: { stdout: (text: string) => void; stderr: (line: string) => void },
): Promise<number> {
  const print = (json: unknown, text: string) => io.stdout(cmd.json ? JSON.stringify(json) : text);
  const { taskQueue } = target;
  return inSession({ ...target, note: (line) => (cmd.json ? undefined : io.stderr(line)) }, async (session) => {
    const { client } = session;
    switch (cmd.action) {
      case 'budget': {
        // The ledger runs on the fleet's task queue; setTenantBudget says when no worker serves it.
        const { fleetTaskQueue } = target.settings;
        const usage = await setTenantBudget(client, cmd.tenant, cmd.budget, { fleetTaskQueue });
        print(usage, usageText([usage]));
        return 0;
      }
      case 'usage': {
        const usage = cmd.tenant
          ? [await readTenantUsage(client, cmd.tenant)].filter(isUsage)
          : await listTenantUsage(client);
        if (cmd.tenant && usage.length === 0) {
          print(
            { tenant: cmd.tenant, spent: { tokens: 0, usd: 0, calls: 0 } },
            `Tenant ${cmd.tenant}: nothing spent yet, and no budget.`,
          );
          return 0;
        }
        print(
          cmd.tenant ? usage[0] : { tenants: usage },
          usage.length ? usageText(usage) : 'No tenant has spent anything yet.',
        );
        return 0;
      }
      case 'weight': {
        await setTenantWeight(client, cmd.tenant, cmd.weight, { taskQueue });
        print(
          { tenant: cmd.tenant, taskQueue, weight: cmd.weight ?? null },
          cmd.weight === undefined
            ? `Tenant ${cmd.tenant}: the weight on task queue "${taskQueue}" is removed (runs' own weights apply, default 1).`
            : `Tenant ${cmd.tenant}: weight ${cmd.weight} on task queue "${taskQueue}" (workflow and activity tasks).`,
        );
        return 0;
      }
    }
  });
}

function isUsage(u: TenantUsage | undefined): u is TenantUsage {
  return u !== undefined;
}

/** A table of tenants' spending this period against their budgets. */
function usageText(usage: readonly (TenantUsage | { tenant: string; unavailable: string })[]): string {
  const limit = (u: TenantUsage) =>
    u.budget
      ? [
          ...(u.budget.tokens !== undefined ? [`${u.budget.tokens.toLocaleString('en')} tokens`] : []),
          ...(u.budget.usd !== undefined ? [`$${u.budget.usd}`] : []),
        ].join(' / ') + ` a ${u.budget.per}`
      : 'none';
  return tableText(
    ['TENANT', 'PERIOD', 'TOKENS', 'USD', 'CALLS', 'IN FLIGHT', 'BUDGET'],
    usage.map((u) =>
      'unavailable' in u
        ? [u.tenant, '?', '?', '?', '?', '?', `? (${u.unavailable})`]
        : [
            u.tenant,
            u.period,
            u.spent.tokens.toLocaleString('en'),
            u.spent.usd.toFixed(4),
            String(u.spent.calls),
            u.held.tokens ? `${u.held.tokens.toLocaleString('en')} tokens` : '-',
            limit(u),
          ],
    ),
  );
}
