import { homedir } from 'node:os';
import { join } from 'node:path';
import type { EncryptionKey } from '../codec/encryption-codec';
import { SealedJsonFile } from '../storage/sealed-file';

/** The file's shape: secrets by tenant (`""`: runs without a tenant), then by name. */
type Credentials = Record<string, Record<string, string>>;

/**
 * Tools' API keys per tenant: `durable-agents credentials set <name> --tenant T` stores one (read
 * from stdin), and a tool reads the one of its run's tenant with `ctx.credential(name)`. A run of
 * a tenant gets only that tenant's; a run without a tenant, the ones set without `--tenant`. Kept
 * in a file only the workers read (`AGENT_CREDENTIALS`, default ~/.durable-agents/credentials.json;
 * encrypted with AGENT_ENCRYPTION_KEYS when set), never in a workflow's history.
 */
export class CredentialStore {
  private readonly file: SealedJsonFile<Credentials>;

  constructor(path?: string, keys?: readonly EncryptionKey[]) {
    this.file = new SealedJsonFile(path, keys, () => ({}), 'durable-agents credentials set <name>');
  }

  /** Where the store is kept (undefined: in memory). */
  get path(): string | undefined {
    return this.file.path;
  }

  /** The secret `name` of `tenant` (of runs without a tenant when undefined), if one is set. */
  async get(name: string, tenant?: string): Promise<string | undefined> {
    const all = await this.file.read();
    const own = all[tenant ?? ''];
    return own && Object.hasOwn(own, name) ? own[name] : undefined;
  }

  /** Sets (or with `undefined`, removes) the secret `name` of `tenant`. */
  async set(name: string, value: string | undefined, tenant?: string): Promise<void> {
    // One step under the file's lock: sets made at once, by any number of processes, all land.
    await this.file.update((all) => {
      const own = { ...(all[tenant ?? ''] ?? {}) };
      if (value === undefined) delete own[name];
      else own[name] = value;
      all[tenant ?? ''] = own;
      return all;
    });
  }

  /** The names set for `tenant` (never the secrets). */
  async names(tenant?: string): Promise<string[]> {
    return Object.keys((await this.file.read())[tenant ?? ''] ?? {}).sort();
  }
}

/** Where workers and `credentials set` keep tools' secrets: AGENT_CREDENTIALS, else ~/.durable-agents/credentials.json. */
export function defaultCredentialsPath(env: NodeJS.ProcessEnv): string {
  return env.AGENT_CREDENTIALS || join(homedir(), '.durable-agents', 'credentials.json');
}
