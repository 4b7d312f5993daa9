import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { basename, dirname, join } from 'node:path';
import type { BundleOptions } from '@temporalio/worker';
import { PACKAGE_ROOT } from '../connection/temporal-cli';
import { packageVersion } from '../connection/package-version';

/**
 * Workflow bundles kept on disk, so that a worker starts without webpack: Temporal's bundler takes
 * 3 to 7 s at every start, which deploys, autoscaling and tests all pay. An entry is keyed by what
 * the bundler is given (workflow module, interceptor and converter modules, the webpack hook's
 * text, the SDK's and this package's versions) and holds the bundle with the content hash of every
 * file webpack read to make it; a worker uses it only when all those files are as they were, so an
 * edited workflow, a changed dependency or an upgraded SDK bundles afresh.
 *
 * Hand-written because the SDK has no such cache (its bundler always runs webpack; webpack's own
 * filesystem cache still runs the compiler, about as slow as a cold start here).
 */
export class WorkflowBundleCache {
  constructor(
    /** The directory entries are kept in (created when the first one is saved). */
    readonly dir: string,
  ) {}

  /** The key of a bundle: what goes into it besides the files it reads. */
  key(options: BundleOptions, extra: Record<string, unknown> = {}): string {
    const inputs = {
      format: 2,
      durableAgents: packageVersion(),
      sdk: sdkVersion(),
      workflowsPath: options.workflowsPath,
      workflowInterceptorModules: options.workflowInterceptorModules ?? [],
      payloadConverterPath: options.payloadConverterPath,
      failureConverterPath: options.failureConverterPath,
      ignoreModules: options.ignoreModules ?? [],
      preloadModules: options.preloadModules ?? [],
      // A hook is code: its text stands for it (a hook whose behaviour hangs on other state should
      // turn the cache off, `bundleCache: false`).
      webpackConfigHook: options.webpackConfigHook?.toString(),
      ...extra,
    };
    return createHash('sha256').update(JSON.stringify(inputs)).digest('hex').slice(0, 32);
  }

  /** The cached bundle of `key`, if there is one and every file it was made from is unchanged. */
  lookup(key: string): string | undefined {
    let manifest: Manifest;
    try {
      manifest = JSON.parse(readFileSync(join(this.dir, `${key}.json`), 'utf8')) as Manifest;
    } catch {
      return undefined;
    }
    for (const [file, seen] of Object.entries(manifest.files)) if (!unchanged(file, seen)) return undefined;
    try {
      const code = readFileSync(join(this.dir, `${key}.js`), 'utf8');
      return hashText(code) === manifest.code ? code : undefined;
    } catch {
      return undefined;
    }
  }

  /**
   * Saves a bundle and the files it was made from. Best effort: a cache that cannot be written
   * (a read-only image) only means the next start bundles again.
   */
  save(key: string, code: string, files: Iterable<string>): boolean {
    try {
      const hashes: Manifest['files'] = {};
      for (const file of [...files].sort()) {
        const seen = fileState(file);
        // Files that are not on disk (the bundler's generated entry point, in memory) come from the key.
        if (seen !== undefined) hashes[file] = seen;
      }
      mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      const tmp = `.${process.pid}-${Date.now()}`;
      // The code first, then the manifest that vouches for it; each renamed into place whole.
      writeFileSync(join(this.dir, `${key}.js${tmp}`), code);
      renameSync(join(this.dir, `${key}.js${tmp}`), join(this.dir, `${key}.js`));
      const manifest: Manifest = { files: hashes, code: hashText(code), savedAt: new Date().toISOString() };
      writeFileSync(join(this.dir, `${key}.json${tmp}`), JSON.stringify(manifest));
      renameSync(join(this.dir, `${key}.json${tmp}`), join(this.dir, `${key}.json`));
      this.prune(key);
      return true;
    } catch {
      return false;
    }
  }

  /** Keeps the newest {@link KEPT} entries: each is a few megabytes, and old ones are never read again. */
  private prune(kept: string): void {
    const entries = readdirSync(this.dir)
      .filter((f) => f.endsWith('.json') && f !== `${kept}.json`)
      .map((f) => ({ key: basename(f, '.json'), at: statSync(join(this.dir, f)).mtimeMs }))
      .sort((a, b) => b.at - a.at);
    for (const old of entries.slice(KEPT - 1)) {
      rmSync(join(this.dir, `${old.key}.json`), { force: true });
      rmSync(join(this.dir, `${old.key}.js`), { force: true });
    }
  }
}

/** How many bundles a cache keeps (workers of a few builds or task queues on one machine). */
const KEPT = 8;

interface Manifest {
  /** Every file webpack read, by path: its content hash, size and modification time. */
  files: Record<string, FileState>;
  /** The bundle's own hash, so a torn or edited file is never run. */
  code: string;
  savedAt: string;
}

/**
 * The default cache directory: `node_modules/.cache/durable-agents` of the project the package is
 * installed in (where build tools keep their caches, so a clean install clears it), else one in
 * the system's temporary directory, private to the user.
 */
export function defaultBundleCacheDir(): string {
  const parent = dirname(PACKAGE_ROOT);
  const modules = basename(parent) === 'node_modules' ? parent : join(PACKAGE_ROOT, 'node_modules');
  try {
    statSync(modules);
    return join(modules, '.cache', 'durable-agents', 'workflow-bundles');
  } catch {
    return join(tmpdir(), `durable-agents-bundles-${safeUser()}`);
  }
}

function safeUser(): string {
  try {
    return userInfo().username.replace(/[^\w.-]/g, '_');
  } catch {
    return String(process.getuid?.() ?? 'user');
  }
}

function sdkVersion(): string {
  try {
    return (JSON.parse(readFileSync(require.resolve('@temporalio/worker/package.json'), 'utf8')) as { version: string })
      .version;
  } catch {
    return 'unknown';
  }
}

function hashText(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

interface FileState {
  hash: string;
  size: number;
  mtimeMs: number;
}

/** A file's content hash, size and time, or undefined when it is not a readable file on disk. */
function fileState(file: string): FileState | undefined {
  try {
    const { size, mtimeMs } = statSync(file);
    return { hash: createHash('sha1').update(readFileSync(file)).digest('hex'), size, mtimeMs };
  } catch {
    return undefined;
  }
}

/**
 * Whether a file is as it was: its size and time say so without reading it (a start checks some
 * 300 files); when they changed (a checkout, a touch), its content decides.
 */
function unchanged(file: string, seen: FileState): boolean {
  try {
    const { size, mtimeMs } = statSync(file);
    if (size === seen.size && mtimeMs === seen.mtimeMs) return true;
    return size === seen.size && createHash('sha1').update(readFileSync(file)).digest('hex') === seen.hash;
  } catch {
    return false;
  }
}
