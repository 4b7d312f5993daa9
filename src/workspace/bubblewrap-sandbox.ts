import { spawn, execFile } from 'node:child_process';
import { existsSync, lstatSync, readlinkSync } from 'node:fs';
import { chmod, lstat, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { OutputTail, type CommandSandbox, type SandboxCommand, type SandboxResult } from './sandbox';
import { startNetworkProxy, BRIDGE_SCRIPT, PROXY_PORT } from './network-proxy';

/**
 * The default sandbox on Linux: bubblewrap (`bwrap`, Debian's `bubblewrap`), driven directly.
 * Each command gets new namespaces (user, mount, PID, network, IPC, UTS) and sees:
 * - the system's programs and libraries (`/usr`, `/bin`, `/lib`, `/etc`) read-only, with the
 *   password hashes (`/etc/shadow`, `/etc/gshadow`) masked;
 * - the workspace at `/workspace`, the only place it can write that outlives it, and a private
 *   `/tmp`; nothing else of the worker's disk (no home directories, no `/root`, no `/work`);
 * - no network: only its own loopback, unless the workspace allows hosts, which it reaches
 *   through a proxy that admits those hosts only;
 * - none of the worker's environment (its keys stay out), and bounded CPU time, memory,
 *   processes and file size (`prlimit`).
 * A worker that runs as root runs the sandbox as an unprivileged user (65534 by default), so an
 * escape from it would not land as root. Why not `@anthropic-ai/sandbox-runtime`: it needs Node
 * 22.12, where this package supports 20.19, and what it adds on Linux (a proxy for an allow-list)
 * is the small part of this file.
 */
export class BubblewrapSandbox implements CommandSandbox {
  readonly name = 'bubblewrap';
  private checked?: Promise<string | undefined>;

  constructor(
    private readonly options: {
      /** The bwrap program (default: `bwrap` on the PATH). */
      bwrap?: string;
      /** The user a root worker runs commands as (default 65534, "nobody"). */
      uid?: number;
    } = {},
  ) {}

  /** The user commands run as when the worker is root; undefined when the worker is not. */
  get sandboxUid(): number | undefined {
    return process.getuid?.() === 0 ? (this.options.uid ?? 65534) : undefined;
  }

  problem(): Promise<string | undefined> {
    this.checked ??= this.check();
    return this.checked;
  }

  private async check(): Promise<string | undefined> {
    if (process.platform !== 'linux')
      return `the bubblewrap sandbox runs on Linux only (this worker is on ${process.platform}): give the plugin another sandbox (workspaces: { sandbox }), an AI SDK sandbox for one`;
    try {
      const [program, ...args] = this.wrap(['/bin/true'], []);
      await promisify(execFile)(program, args, { timeout: 10_000 }).catch(
        (e: NodeJS.ErrnoException & { stderr?: string }) => {
          if (e.code === 'ENOENT')
            throw new Error(
              'bubblewrap (bwrap) is not installed on this worker: install it (Debian and Ubuntu: apt-get install bubblewrap; in this repository: npm run setup:sandbox)',
            );
          const said = (e.stderr ?? e.message).trim();
          // --size (a bounded /tmp) came in bubblewrap 0.5.
          if (/unknown option.*--size/i.test(said))
            throw new Error(
              `bubblewrap on this worker is older than 0.5 (${said}): install a newer one (Debian 12 and Ubuntu 22.04 have 0.6 or later)`,
            );
          throw new Error(
            `bubblewrap cannot make a sandbox here (${said}): it needs unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1; in a container, a seccomp profile that allows them)`,
          );
        },
      );
      return undefined;
    } catch (e) {
      return (e as Error).message;
    }
  }

  private get bwrap(): string {
    return this.options.bwrap ?? 'bwrap';
  }

  async run(cmd: SandboxCommand): Promise<SandboxResult> {
    const problem = await this.problem();
    if (problem) throw new Error(problem);
    const proxy = cmd.network.length ? await startNetworkProxy(cmd.network) : undefined;
    const extra = proxy ? await this.bridgeFiles(proxy.socketPath) : undefined;
    try {
      const limited = [
        '/usr/bin/prlimit',
        `--cpu=${Math.ceil(cmd.timeoutMs / 1000) + 5}`,
        `--data=${cmd.limits.memoryMb * 1024 * 1024}`,
        `--nproc=${cmd.limits.processes}`,
        `--fsize=${cmd.limits.fileMb * 1024 * 1024}`,
        '--nofile=4096',
        '--core=0',
        '--',
        '/bin/bash',
        '-c',
        cmd.command,
      ];
      const inner = extra ? ['/bin/bash', '-c', `${extra.start}\nexec "$@"`, 'sandbox', ...limited] : limited;
      const args = this.wrap(inner, extra?.binds ?? [], cmd.dir, proxy !== undefined, cmd.limits.fileMb);
      return await execute(args[0], args.slice(1), cmd);
    } finally {
      await proxy?.close();
      if (extra) await rm(extra.dir, { recursive: true, force: true });
    }
  }

  /** The bwrap command line around `inner`: `[program, ...args]`. */
  private wrap(inner: string[], binds: string[], dir?: string, proxied = false, tmpMb = 64): string[] {
    const args = [
      '--unshare-all',
      '--die-with-parent',
      '--new-session',
      '--clearenv',
      '--setenv',
      'PATH',
      '/usr/local/bin:/usr/bin:/bin',
      '--setenv',
      'HOME',
      '/workspace',
      '--setenv',
      'TMPDIR',
      '/tmp',
      '--setenv',
      'LANG',
      'C.UTF-8',
      '--setenv',
      'TERM',
      'dumb',
      '--ro-bind',
      '/usr',
      '/usr',
    ];
    // Merged-/usr systems link /bin to usr/bin: the links are made, the others bound.
    for (const top of ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32']) {
      if (!existsSync(top)) continue;
      if (lstatSync(top).isSymbolicLink()) args.push('--symlink', readlinkSync(top), top);
      else args.push('--ro-bind', top, top);
    }
    args.push('--ro-bind', '/etc', '/etc');
    for (const secret of ['/etc/shadow', '/etc/gshadow', '/etc/shadow-', '/etc/gshadow-', '/etc/sudoers'])
      if (existsSync(secret)) args.push('--ro-bind', '/dev/null', secret);
    // Its /tmp is memory, as big as its workspace may be: the worker's memory is not its to fill.
    args.push('--proc', '/proc', '--dev', '/dev', '--size', String(tmpMb * 1024 * 1024), '--tmpfs', '/tmp');
    if (dir) args.push('--bind', dir, '/workspace', '--chdir', '/workspace');
    args.push(...binds);
    if (proxied)
      for (const name of ['HTTP_PROXY', 'HTTPS_PROXY', 'http_proxy', 'https_proxy', 'ALL_PROXY'])
        args.push('--setenv', name, `http://127.0.0.1:${PROXY_PORT}`);
    args.push('--', ...inner);
    const uid = this.sandboxUid;
    return uid === undefined
      ? [this.bwrap, ...args]
      : ['setpriv', `--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', '--', this.bwrap, ...args];
  }

  /** The bridge from the sandbox's loopback to the proxy's socket, run by the worker's own Node. */
  private async bridgeFiles(socketPath: string): Promise<{ dir: string; binds: string[]; start: string }> {
    const dir = await mkdtemp(join(tmpdir(), 'durable-agents-bridge-'));
    await writeFile(join(dir, 'bridge.js'), BRIDGE_SCRIPT);
    // The sandbox's user (not the worker's, when that is root) reads it.
    await chmod(dir, 0o755);
    return {
      dir,
      binds: [
        '--ro-bind',
        process.execPath,
        '/run/durable-agents/node',
        '--ro-bind',
        join(dir, 'bridge.js'),
        '/run/durable-agents/bridge.js',
        '--bind',
        socketPath,
        '/run/durable-agents/proxy.sock',
      ],
      // The bridge listens before the command starts: it prints once it does.
      start:
        '/run/durable-agents/node /run/durable-agents/bridge.js /run/durable-agents/proxy.sock > /tmp/.bridge 2>&1 &\n' +
        'for i in $(seq 200); do [ -s /tmp/.bridge ] && break; sleep 0.01; done',
    };
  }
}

/** Runs the sandbox's program and collects what the command wrote, killing it at its time or when aborted. */
function execute(program: string, args: string[], cmd: SandboxCommand): Promise<SandboxResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const stdout = new OutputTail();
    const stderr = new OutputTail();
    child.stdout.on('data', (c: Buffer) => stdout.add(c));
    child.stderr.on('data', (c: Buffer) => stderr.add(c));
    let timedOut = false;
    // The whole process group: bwrap, and with --die-with-parent everything under it.
    const kill = () => {
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, cmd.timeoutMs);
    // Files are bounded one by one (prlimit); together, the workspace is measured while it runs.
    let diskFull = false;
    const limitBytes = cmd.limits.fileMb * 1024 * 1024;
    const watch = setInterval(() => {
      void directorySize(cmd.dir, limitBytes).then((bytes) => {
        if (bytes <= limitBytes || diskFull) return;
        diskFull = true;
        kill();
      });
    }, DISK_WATCH_MS);
    const onAbort = () => kill();
    cmd.signal?.addEventListener('abort', onAbort, { once: true });
    child.on('error', (e) => {
      clearTimeout(timer);
      clearInterval(watch);
      reject(e);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      clearInterval(watch);
      cmd.signal?.removeEventListener('abort', onAbort);
      const full = `[killed: its files passed the workspace's ${cmd.limits.fileMb} MiB (workspace.diskMb)]\n`;
      resolve({
        exitCode: signal ? null : code,
        ...(signal ? { signal } : {}),
        stdout: stdout.text(),
        stderr: diskFull ? stderr.text() + full : stderr.text(),
        ...(timedOut ? { timedOut } : {}),
        ...(diskFull ? { diskFull } : {}),
        ...(stdout.dropped || stderr.dropped ? { truncated: true } : {}),
      });
    });
  });
}

/** How often a running command's workspace is measured. */
const DISK_WATCH_MS = 500;

/** The bytes of the files under `dir` (links not followed), counted until past `stopAt`. */
async function directorySize(dir: string, stopAt: number): Promise<number> {
  let total = 0;
  const walk = async (at: string): Promise<void> => {
    const entries = await readdir(at, { withFileTypes: true }).catch(() => []);
    for (const e of entries) {
      if (total > stopAt) return;
      const path = join(at, e.name);
      if (e.isDirectory()) await walk(path);
      else if (e.isFile()) total += (await lstat(path).catch(() => undefined))?.size ?? 0;
    }
  };
  await walk(dir);
  return total;
}
