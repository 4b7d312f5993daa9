import { spawn, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { ChatRequest } from '../../src/testing/openai-compatible-server';
import { cleanEnv, ROOT, type Finished } from './processes';
import { answer, call, lastOf } from './scripted-model';

/**
 * The examples as their users have them: copied out of this repository into `work`, depending on
 * the packed tarball, installed with npm and run with plain `node`. `node` is the Node.js binary
 * they run on (default: this process's); another one goes first on the PATH of everything run here,
 * npm included, as it would on a machine with that Node installed.
 */
export class ExampleProjects {
  /** What `npm install` printed in each example. */
  readonly installOutput: Record<string, string> = {};

  constructor(
    private readonly work: string,
    private readonly tarball: string,
    readonly node: string = process.execPath,
    /** A directory whose `node` is `node` (see `nodeBinDir`), put first on the PATH; default: none. */
    private readonly binDir?: string,
  ) {}

  /** The environment of everything run here: `cleanEnv(extra)`, with this Node first on the PATH. */
  env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
    const env = cleanEnv(extra);
    if (!this.binDir) return env;
    // As on a machine with that Node: without what `npm test` told this process of its own Node
    // (`NODE`, `npm_node_execpath`, `npm_config_*`), which npm would otherwise run scripts with.
    for (const key of Object.keys(env)) if (/^(npm_|NODE$)/i.test(key)) delete env[key];
    return { ...env, PATH: `${this.binDir}${delimiter}${env.PATH ?? ''}` };
  }

  /**
   * A copy of an example, depending on the packed tarball, installed (its `prepare` compiles it).
   * `extraFiles` are written into the copy first (path in the example → content). With `seed` (an
   * example installed already), its node_modules is hard-linked in first: npm then resolves the
   * whole tree and checks it, but fetches and extracts only the packages the seed lacks.
   */
  install(name: string, extraFiles: Record<string, string> = {}, seed?: string): string {
    const dir = join(this.work, name);
    cpSync(join(ROOT, 'examples', name), dir, { recursive: true, filter: (src) => !/node_modules|dist/.test(src) });
    if (seed) {
      const linked = spawnSync('cp', ['-al', join(seed, 'node_modules'), join(dir, 'node_modules')], {
        encoding: 'utf8',
      });
      if (linked.status !== 0) throw new Error(`cp -al ${seed}/node_modules failed: ${linked.stderr}`);
      // npm rewrites its record of the tree in place: the copy's must be a file of its own.
      rmSync(join(dir, 'node_modules', '.package-lock.json'), { force: true });
    }
    for (const [file, content] of Object.entries(extraFiles)) writeFileSync(join(dir, file), content);
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    manifest.dependencies['durable-agents'] = `file:${this.tarball}`;
    writeFileSync(join(dir, 'package.json'), JSON.stringify(manifest, null, 2));
    return this.npmInstall(name, dir);
  }

  /**
   * The example installed elsewhere (`from`, another Node's copy), copied with its node_modules as
   * hard links, then installed again here: npm builds the whole tree from the lockfile and checks
   * every package's engines on this Node, but extracts nothing it has (the tarball's half a
   * minute of extracting and compiling, once instead of per Node; its scripts are not run, so the
   * project is not compiled again either).
   */
  reinstall(name: string, from: string): string {
    const dir = join(this.work, name);
    mkdirSync(this.work, { recursive: true });
    const copied = spawnSync('cp', ['-al', from, dir], { encoding: 'utf8' });
    if (copied.status !== 0) throw new Error(`cp -al ${from} ${dir} failed: ${copied.stderr}`);
    // Without scripts: the copy's `dist` is compiled already (by the same TypeScript, to the same output).
    return this.npmInstall(name, dir, ['--ignore-scripts']);
  }

  private npmInstall(name: string, dir: string, flags: string[] = []): string {
    const installed = spawnSync('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', ...flags], {
      cwd: dir,
      encoding: 'utf8',
      env: this.env(),
    });
    if (installed.status !== 0)
      throw new Error(`npm install in ${name} failed:\n${installed.stdout}\n${installed.stderr}`);
    this.installOutput[name] = `${installed.stdout}${installed.stderr}`;
    return dir;
  }

  /**
   * Runs a command in `dir` to completion, without blocking this process: the scripted model
   * answers from here, so a synchronous spawn would leave the program's model calls hanging.
   * `node` as the command means this Node.
   */
  exec(command: string, args: string[], dir: string, env: NodeJS.ProcessEnv): Promise<Finished> {
    const child = spawn(command === 'node' ? this.node : command, args, { cwd: dir, env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
  }

  /** Starts a long-running `node <args>` in `dir`, resolving once its output matches `ready`. */
  async start(dir: string, args: string[], env: NodeJS.ProcessEnv, ready: RegExp) {
    const child = spawn(this.node, args, { cwd: dir, env, detached: true });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    const deadline = Date.now() + 120_000;
    while (!ready.test(out)) {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`not ready:\n${out}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    return {
      stop: () => process.kill(-child.pid!, 'SIGKILL'),
      // Ctrl+C in a terminal: SIGINT to the process (the dev server runs in a group of its own).
      interrupt: () => process.kill(child.pid!, 'SIGINT'),
      exited,
      output: () => out,
    };
  }

  /** The environment of an example's programs: the test server, a scripted model, a task queue. */
  programEnv(baseURL: string, taskQueue: string): NodeJS.ProcessEnv {
    return this.env({
      TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS!,
      OPENAI_BASE_URL: baseURL,
      OPENAI_API_KEY: 'e2e',
      AGENT_MODEL: 'scripted',
      AGENT_TASK_QUEUE: taskQueue,
    });
  }
}

/** The LLM of the examples: look the thing up with the one tool offered, then answer as JSON. */
export function exampleModel(req: ChatRequest) {
  const tool = req.tools?.[0]?.function.name;
  const last = req.messages[req.messages.length - 1];
  if (last.role !== 'tool') {
    if (tool === 'lookup_order')
      return call(['lookup_order', { orderNumber: /A-\d+/.exec(lastOf(req, 'user'))?.[0] ?? 'A-0' }]);
    return call(['search_weather', { city: /in (\w+)/.exec(lastOf(req, 'user'))?.[1] ?? 'Paris' }]);
  }
  const result = JSON.parse(String(last.content));
  // Structured output was asked for with response_format; answer with JSON under the schema.
  if (!req.response_format) return answer('(no response_format in the request)');
  if (tool === 'lookup_order')
    return answer(
      JSON.stringify({
        orderNumber: result.orderNumber,
        status: result.status,
        reply: `Your order ${result.orderNumber} has ${result.status} and should arrive on ${result.eta}.`,
      }),
    );
  return answer(JSON.stringify({ city: /in (\w+)/.exec(lastOf(req, 'user'))?.[1], celsius: result }));
}
