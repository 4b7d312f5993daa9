import { deploymentStatus, promoteBuild, rampBuild, waitForDrain, type DeploymentReport } from '../client/deployments';
import { commandName, hintCommand } from './command-name';
import { durationMs, parseFlags, UsageError } from './option-flags';
import { inSession, type CommandTarget } from './session';
import { tableText } from './table';

/** The usage lines of `deploy`. */
export const DEPLOY_USAGE = `usage: ${commandName()} deploy status [--deployment NAME] [--json]
       ${commandName()} deploy promote <buildId> [--deployment NAME] [--json]
       ${commandName()} deploy ramp <buildId> <percent> [--deployment NAME] [--json]
       ${commandName()} deploy drain-wait <buildId> [--timeout 1h] [--deployment NAME] [--json]`;

/** A parsed `deploy` command. */
export type DeployCommand = { deployment: string; json: boolean } & (
  | { action: 'status' }
  | { action: 'promote'; buildId: string }
  | { action: 'ramp'; buildId: string; percent: number }
  | { action: 'drain-wait'; buildId: string; timeoutMs?: number }
);

const ACTIONS = ['status', 'promote', 'ramp', 'drain-wait'] as const;

/** Parses `deploy <action> ...`; the deployment is `--deployment`, else `AGENT_DEPLOYMENT_NAME` of `env`. */
export function parseDeployArgs(argv: string[], env: NodeJS.ProcessEnv): DeployCommand {
  const [action, ...rest] = argv;
  if (!action) throw new UsageError(`deploy needs an action: ${ACTIONS.join(', ')}`);
  if (!(ACTIONS as readonly string[]).includes(action))
    throw new UsageError(`unknown deploy action "${action}" (the actions: ${ACTIONS.join(', ')})`);
  const { values, positionals } = parseFlags(rest, {
    deployment: { type: 'string' },
    json: { type: 'boolean', default: false },
    ...(action === 'drain-wait' ? { timeout: { type: 'string' } } : {}),
  });
  const deployment = values.deployment ?? env.AGENT_DEPLOYMENT_NAME?.trim();
  if (!deployment)
    throw new UsageError('which deployment? give --deployment NAME or set AGENT_DEPLOYMENT_NAME (as the workers do)');
  const base = { deployment, json: values.json ?? false };
  const want = action === 'status' ? 0 : action === 'ramp' ? 2 : 1;
  if (positionals.length !== want)
    throw new UsageError(
      want === 0
        ? `deploy status takes no arguments, got ${positionals.join(' ')}`
        : `deploy ${action} takes ${action === 'ramp' ? '<buildId> <percent>' : '<buildId>'}, got ${positionals.length ? positionals.join(' ') : 'nothing'}`,
    );
  if (action === 'status') return { ...base, action };
  const buildId = positionals[0];
  if (action === 'promote') return { ...base, action, buildId };
  if (action === 'ramp') {
    const raw = positionals[1].replace(/%$/, '');
    const percent = Number(raw);
    if (raw === '' || !Number.isFinite(percent) || percent < 0 || percent > 100)
      throw new UsageError(`the ramp must be a percentage from 0 to 100, got ${positionals[1]}`);
    return { ...base, action, buildId, percent };
  }
  const timeout = (values as { timeout?: string }).timeout;
  return {
    ...base,
    action: 'drain-wait',
    buildId,
    ...(timeout ? { timeoutMs: durationMs('--timeout', timeout) } : {}),
  };
}

/** Runs a `deploy` command against the deployment's Temporal namespace; every change is said. */
export async function runDeployCommand(
  cmd: DeployCommand,
  target: CommandTarget,
  io: { stdout: (text: string) => void; stderr: (line: string) => void },
): Promise<number> {
  const print = (json: unknown, text: string) => io.stdout(cmd.json ? JSON.stringify(json) : text);
  return inSession(
    { ...target, serve: false, note: (line) => (cmd.json ? undefined : io.stderr(line)) },
    async ({ client, scoped }) => {
      switch (cmd.action) {
        case 'status': {
          const report = await deploymentStatus(client, cmd.deployment);
          print(report, deploymentText(report));
          return 0;
        }
        case 'promote': {
          const r = await promoteBuild(client, cmd.deployment, cmd.buildId);
          print(r, r.message);
          return 0;
        }
        case 'ramp': {
          const r = await rampBuild(client, cmd.deployment, cmd.buildId, cmd.percent);
          print(r, r.message);
          return 0;
        }
        case 'drain-wait': {
          const r = await scoped(() =>
            waitForDrain(client, cmd.deployment, cmd.buildId, {
              ...(cmd.timeoutMs !== undefined ? { timeoutMs: cmd.timeoutMs } : {}),
              onProgress: (open) =>
                cmd.json || open === 0
                  ? undefined
                  : io.stderr(`${cmd.buildId}: ${open} open workflow${open === 1 ? '' : 's'} pinned to it`),
            }),
          );
          print(r, r.message);
          return 0;
        }
      }
    },
  );
}

/** `deploy status` as a table of builds. */
export function deploymentText(r: DeploymentReport): string {
  if (r.builds.length === 0) return `${r.deployment} has no builds yet`;
  const rows = r.builds.map((b) => [
    b.buildId,
    b.status === 'ramping' ? `ramping ${b.rampPercent}%` : b.status,
    String(b.openRuns),
    String(b.openConversations),
    String(b.openOther),
    b.createdAt?.replace('T', ' ').slice(0, 19) ?? '-',
  ]);
  const lines = [
    `Deployment ${r.deployment}: current ${r.current ?? 'none (unversioned workers get new runs)'}${r.ramping ? `, ${r.ramping.buildId} ramping at ${r.ramping.percent}%` : ''}`,
    tableText(['BUILD', 'STATUS', 'OPEN RUNS', 'CONVERSATIONS', 'OTHER', 'FIRST POLLED (UTC)'], rows),
  ];
  if (!r.current) lines.push(`Make a build current with: ${hintCommand()} deploy promote <buildId>`);
  return lines.join('\n');
}
