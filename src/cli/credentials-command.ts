import { encryptionKeysFromEnv } from '../codec/encryption-codec';
import { tenantProblem } from '../core/fleet/tenants';
import { CredentialStore, defaultCredentialsPath } from '../tools/credential-store';
import { commandName } from './command-name';
import { parseFlags, UsageError } from './option-flags';

/** The usage lines of `credentials`. */
export const CREDENTIALS_USAGE = `usage: ${commandName()} credentials set <name> [--tenant T] < secret.txt
       ${commandName()} credentials list [--tenant T] [--json]
       ${commandName()} credentials delete <name> [--tenant T]`;

/** What `credentials` was asked. */
export interface CredentialsCommand {
  action: 'set' | 'list' | 'delete';
  name?: string;
  tenant?: string;
  json: boolean;
}

/** Reads `credentials ...`; every mistake is a {@link UsageError}. */
export function parseCredentialsArgs(argv: string[]): CredentialsCommand {
  const [action, ...rest] = argv;
  const { values, positionals } = parseFlags(rest, { tenant: { type: 'string' }, json: { type: 'boolean' } });
  const problem = tenantProblem(values.tenant, '--tenant');
  if (problem) throw new UsageError(problem);
  const base = { json: values.json ?? false, ...(values.tenant !== undefined ? { tenant: values.tenant } : {}) };
  if (action === 'list') {
    if (positionals.length) throw new UsageError('credentials list takes no arguments (--tenant T for a tenant)');
    return { action, ...base };
  }
  if (action === 'set' || action === 'delete') {
    if (positionals.length !== 1 || !/^[A-Za-z0-9_.-]{1,64}$/.test(positionals[0]))
      throw new UsageError(`credentials ${action} expects one <name> (letters, digits, _ . -)`);
    return { action, name: positionals[0], ...base };
  }
  throw new UsageError(
    action === undefined ? 'credentials expects set, list or delete' : `unknown credentials action "${action}"`,
  );
}

/** Runs `credentials ...` on the workers' store (AGENT_CREDENTIALS, AGENT_ENCRYPTION_KEYS). */
export async function runCredentialsCommand(
  cmd: CredentialsCommand,
  env: NodeJS.ProcessEnv,
  io: { stdout: (text: string) => void; stderr: (line: string) => void; stdin: NodeJS.ReadableStream },
): Promise<number> {
  const keys = encryptionKeysFromEnv(env);
  const store = new CredentialStore(defaultCredentialsPath(env), keys);
  const whose = cmd.tenant === undefined ? 'runs without a tenant' : `tenant "${cmd.tenant}"`;
  if (cmd.action === 'list') {
    const names = await store.names(cmd.tenant);
    io.stdout(
      cmd.json
        ? JSON.stringify({ tenant: cmd.tenant ?? null, names })
        : names.join('\n') || `No credentials for ${whose}.`,
    );
    return 0;
  }
  if (cmd.action === 'delete') {
    await store.set(cmd.name!, undefined, cmd.tenant);
    io.stderr(`Deleted ${cmd.name} of ${whose}.`);
    return 0;
  }
  // The secret from stdin, never from the command line (where the shell's history would keep it).
  let secret = '';
  for await (const chunk of io.stdin) secret += String(chunk);
  secret = secret.replace(/\r?\n$/, '');
  if (!secret)
    throw new UsageError(
      `credentials set reads the secret from stdin: echo "$KEY" | ${commandName()} credentials set ${cmd.name}`,
    );
  await store.set(cmd.name!, secret, cmd.tenant);
  io.stderr(
    `Set ${cmd.name} for ${whose} in ${store.path}${keys?.length ? ' (encrypted with AGENT_ENCRYPTION_KEYS)' : ''}; tools read it with ctx.credential("${cmd.name}").`,
  );
  return 0;
}
