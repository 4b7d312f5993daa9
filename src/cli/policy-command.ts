import { recordedDecisions, tryPolicies, type PolicyCheckReport } from '../client/policy-check';
import { parseDuration } from '../core/time/duration';
import { PolicySetError } from '../policies/policy-set';
import { commandName } from './command-name';
import { parseFlags, UsageError } from './option-flags';
import { inSession, type CommandTarget } from './session';
import { tableText } from './table';

/** The usage lines of `policy`. */
export const POLICY_USAGE = `usage: ${commandName()} policy check <file-or-dir> [--since 7d] [--query "<visibility query>"] [--json]`;

/** What `policy` was asked. */
export interface PolicyCommand {
  action: 'check';
  path: string;
  sinceMs: number;
  query?: string;
  json: boolean;
}

/** Reads `policy check ...`; every mistake is a {@link UsageError}. */
export function parsePolicyArgs(argv: string[]): PolicyCommand {
  const [action, ...rest] = argv;
  if (action !== 'check')
    throw new UsageError(action === undefined ? 'policy expects check' : `unknown policy action "${action}": check`);
  const { values, positionals } = parseFlags(rest, {
    since: { type: 'string' },
    query: { type: 'string' },
    json: { type: 'boolean' },
  });
  if (positionals.length !== 1)
    throw new UsageError('policy check expects one .cedar file or directory: the policy set to try');
  let sinceMs = 7 * 24 * 3_600_000;
  if (values.since !== undefined) {
    try {
      sinceMs = parseDuration(values.since);
    } catch {
      throw new UsageError(`--since takes a duration like 7d, 12h or 30m, got "${values.since}"`);
    }
  }
  return {
    action,
    path: positionals[0],
    sinceMs,
    ...(values.query !== undefined ? { query: values.query } : {}),
    json: values.json ?? false,
  };
}

/**
 * Runs `policy check`: reads the decisions recorded by runs started since `--since` (and matching
 * `--query`), decides each again with the policy set at `path`, and prints those that change.
 */
export async function runPolicyCommand(
  cmd: PolicyCommand,
  target: CommandTarget,
  io: { stdout: (text: string) => void; stderr: (line: string) => void },
): Promise<number> {
  return inSession({ ...target, note: (line) => (cmd.json ? undefined : io.stderr(line)) }, async ({ client }) => {
    const recorded = await recordedDecisions(client, {
      since: new Date(Date.now() - cmd.sinceMs),
      ...(cmd.query !== undefined ? { query: cmd.query } : {}),
    });
    let report: PolicyCheckReport;
    try {
      report = tryPolicies({ path: cmd.path }, recorded);
    } catch (e) {
      if (!(e instanceof PolicySetError)) throw e;
      io.stderr(`the policy set at ${cmd.path} cannot be tried: ${e.message}`);
      return 1;
    }
    if (cmd.json) io.stdout(`${JSON.stringify(report)}\n`);
    else io.stdout(reportText(report));
    for (const w of report.warnings) if (!cmd.json) io.stderr(`policies: ${w}`);
    return 0;
  });
}

function reportText(r: PolicyCheckReport): string {
  const rows = r.changed.map((c) => [
    c.workflowId,
    String(c.step),
    c.tool,
    `${c.before} → ${c.after}`,
    c.policies.join(', ') || '(none permits it)',
  ]);
  const table = rows.length ? `${tableText(['RUN', 'STEP', 'TOOL', 'DECISION', 'BY'], rows)}\n` : '';
  const unrecorded = r.withoutRequest ? `; ${r.withoutRequest} recorded without their request, not tried` : '';
  const none =
    r.runsWithDecisions === 0
      ? '\n(no run recorded decisions: runs record them on workers with policies; start with AGENT_POLICY_MODE=log to record without enforcing)'
      : '';
  return `${table}${r.changed.length} of ${r.decisions} decisions in ${r.runsWithDecisions} of ${r.runs} runs would change${unrecorded}${none}\n`;
}
