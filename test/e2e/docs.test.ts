import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChatAnswer, ChatRequest } from '../../src/testing/openai-compatible-server';
import { findTemporalCli } from '../../src/connection/temporal-cli';
import { documentationPages, pageDir, snippetsOf, type Snippet } from '../helpers/doc-snippets';
import { packedTarball } from '../helpers/packed-package';
import { cleanEnv, listening, ROOT, type Finished, devServerPort } from '../helpers/processes';
import { answer, call, closeScriptedModels, lastOf, startModel } from '../helpers/scripted-model';

/**
 * Every TypeScript snippet of the README and the guides, as a user would use it: compiled against
 * the packed package in a project outside this repository, under the tsconfig that
 * docs/getting-started.md documents, once as CommonJS and once as ESM, with today's TypeScript;
 * the runnable ones run with plain `node`, with the embedded dev server (no TEMPORAL_ADDRESS, as
 * in a user's first hour) and a scripted model. See test/helpers/doc-snippets.ts for the markers.
 */

jest.setTimeout(600_000);
afterAll(closeScriptedModels);

const MODES = ['cjs', 'esm'] as const;
const work = mkdtempSync(join(tmpdir(), 'durable-agents-docs-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const snippets = documentationPages().flatMap(snippetsOf);
const compiled = snippets.filter((s) => s.kind !== 'fragment');

/** The tsconfig.json the getting-started guide documents: the first JSON block after its heading. */
function documentedTsconfig(): string {
  const page = readFileSync(join(ROOT, 'docs', 'getting-started.md'), 'utf8');
  const section = page.slice(page.indexOf('## tsconfig.json'));
  const block = /```json\n([\s\S]*?)\n```/.exec(section);
  if (!block) throw new Error('docs/getting-started.md has no tsconfig.json block');
  return block[1];
}

/** The versions this repository uses, so the project resolves what users of this release get. */
function dependencies(tarball: string): Record<string, string> {
  const ours = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  const all = { ...ours.dependencies, ...ours.devDependencies, ...ours.peerDependencies };
  return {
    'durable-agents': `file:${tarball}`,
    '@temporalio/client': all['@temporalio/client'],
    '@temporalio/worker': all['@temporalio/worker'],
    '@temporalio/workflow': all['@temporalio/workflow'],
    zod: all.zod,
    // An AI SDK provider package, as a user adds one (docs/models.md).
    '@ai-sdk/openai-compatible': '^3.0.0',
    // The AI SDK's client side (docs/use-chat.md).
    ai: all.ai,
    // AG-UI's client (docs/ag-ui.md).
    '@ag-ui/client': all['@ag-ui/client'],
    // A2A's SDK (docs/a2a.md).
    '@a2a-js/sdk': all['@a2a-js/sdk'],
    // A React front end on useChat (docs/use-chat.md's tsx snippets).
    '@ai-sdk/react': all['@ai-sdk/react'],
    react: all.react,
    '@types/react': all['@types/react'],
    '@types/node': '^20.19.0',
    // Today's TypeScript, whatever this repository compiles itself with.
    typescript: '^7.0.2',
  };
}

let installed = false;
beforeAll(() => {
  const tarball = packedTarball();
  writeFileSync(
    join(work, 'package.json'),
    JSON.stringify({ name: 'docs-snippets', private: true, dependencies: dependencies(tarball) }, null, 2),
  );
  const npm = spawnSync('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline'], {
    cwd: work,
    encoding: 'utf8',
    env: cleanEnv(),
  });
  if (npm.status !== 0) throw new Error(`npm install failed:\n${npm.stdout}\n${npm.stderr}`);
  // One project per module system, and one for the front-end (tsx) snippets, with the settings
  // Vite's React template uses; all find node_modules in the directory above.
  for (const mode of [...MODES, 'web'] as const) {
    const dir = join(work, mode);
    mkdirSync(dir);
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: mode === 'cjs' ? 'commonjs' : 'module' }));
    writeFileSync(join(dir, 'tsconfig.json'), mode === 'web' ? WEB_TSCONFIG : documentedTsconfig());
    for (const s of compiled.filter((c) => c.modes.includes(mode))) {
      const file = join(dir, 'src', pageDir(s.page), s.file);
      mkdirSync(join(file, '..'), { recursive: true });
      // A snippet without imports or exports would be a script, sharing one scope with the others.
      writeFileSync(file, /^\s*(import|export)\s/m.test(s.code) ? s.code : `${s.code}export {};\n`);
    }
  }
  installed = true;
});

it('has snippets to test, and the markers say which run', () => {
  expect(compiled.length).toBeGreaterThanOrEqual(8);
  expect(snippets.filter((s) => s.kind === 'run').map((s) => `${s.page} ${s.file}`)).toEqual(
    expect.arrayContaining(['README.md agent.ts', 'docs/getting-started.md ask.ts']),
  );
});

/** A browser project's tsconfig, as Vite's React template has it. */
const WEB_TSCONFIG = JSON.stringify({
  compilerOptions: {
    target: 'ES2022',
    lib: ['ES2022', 'DOM', 'DOM.Iterable'],
    module: 'ESNext',
    moduleResolution: 'bundler',
    jsx: 'react-jsx',
    strict: true,
    noEmit: true,
    skipLibCheck: true,
  },
  include: ['src'],
});

it('compiles the front-end snippets (tsx) as a browser project built with Vite does', () => {
  expect(installed).toBe(true);
  expect(compiled.filter((s) => s.modes.includes('web')).length).toBeGreaterThanOrEqual(1);
  const tsc = spawnSync(process.execPath, [join(work, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', '.'], {
    cwd: join(work, 'web'),
    encoding: 'utf8',
  });
  expect(`${tsc.stdout}${tsc.stderr}`).toBe('');
  expect(tsc.status).toBe(0);
});

describe.each(MODES)('as %s', (mode) => {
  it('compiles every snippet under the documented tsconfig', () => {
    expect(installed).toBe(true);
    const tsc = spawnSync(process.execPath, [join(work, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', '.'], {
      cwd: join(work, mode),
      encoding: 'utf8',
    });
    // Name each error by its page and line, as a reader of the docs would look for it.
    const where = (path: string) => {
      const s = compiled.find((c) => path.endsWith(`src/${pageDir(c.page)}/${c.file}`) && c.modes.includes(mode));
      return s ? `${s.page}:${s.line} (${s.file})` : path;
    };
    const errors = `${tsc.stdout}${tsc.stderr}`.replace(/^(src\/[^(:]+)/gm, (path) => where(path));
    expect(errors).toBe('');
    expect(tsc.status).toBe(0);
  });

  // Every page's runnable snippets as CommonJS; as ES modules, the README's (how a module loads the
  // package is the same for every page, and each page's snippets compile as ES modules above).
  const runnable = [...new Set(snippets.filter((s) => s.kind === 'run').map((s) => s.page))];
  for (const page of mode === 'cjs' ? runnable : runnable.filter((p) => p === 'README.md')) {
    it(`runs the runnable snippets of ${page}`, async () => {
      const ofPage = compiled.filter((s) => s.page === page && s.modes.includes(mode));
      const llm = await startModel(docsModel);
      const port = await devServerPort();
      const env = cleanEnv({
        TEMPORAL_CLI_PATH: findTemporalCli(process.env),
        AGENT_DEV_SERVER_PORT: String(port),
        AGENT_DEV_SERVER_DB: join(work, `${mode}-${pageDir(page)}.db`),
        OPENAI_BASE_URL: llm.baseURL,
        OPENAI_API_KEY: 'docs',
        AGENT_MODEL: 'scripted',
      });
      const cwd = join(work, mode);
      const js = (s: Snippet) => join('dist', pageDir(s.page), s.file.replace(/\.ts$/, '.js'));
      const background = ofPage.filter((s) => s.kind === 'background').map((s) => startNode(cwd, js(s), env));
      try {
        for (const b of background) await b.ready;
        for (const s of ofPage.filter((r) => r.kind === 'run')) {
          const before = llm.requests.length;
          const ran = await runNode(cwd, js(s), env);
          expect({ snippet: `${s.page}:${s.line}`, code: ran.code, stderr: ran.code ? ran.stderr : '' }).toEqual({
            snippet: `${s.page}:${s.line}`,
            code: 0,
            stderr: '',
          });
          expect(ran.stdout.trim()).not.toBe('');
          // The agent ran its tool and answered with what the tool returned.
          const requests = llm.requests.slice(before);
          expect(requests.some((r) => r.messages.some((m) => m.role === 'tool'))).toBe(true);
        }
      } finally {
        // Ctrl+C, as in a terminal: the worker stops, and the dev server it started with it.
        for (const b of background) b.interrupt();
        for (const b of background) expect(await b.exited).toBe(0);
      }
      expect(await listening(port)).toBe(false);
    });
  }
});

it("the README's example with no model configured says why in a sentence and exits 1, without stack traces", async () => {
  expect(installed).toBe(true);
  const port = await devServerPort();
  // (After the compiling tests: the CommonJS build exists.)
  const ran = await runNode(
    join(work, 'cjs'),
    join('dist', pageDir('README.md'), 'agent.js'),
    cleanEnv({
      TEMPORAL_CLI_PATH: findTemporalCli(process.env),
      AGENT_DEV_SERVER_PORT: String(port),
      AGENT_DEV_SERVER_DB: join(work, 'no-model.db'),
    }),
  );
  expect(ran.code).toBe(1);
  expect(ran.stdout).toBe('');
  expect(ran.stderr).toMatch(/^The run ended failed: no LLM is configured on this worker: set OPENAI_API_KEY/m);
  expect(ran.stderr).not.toMatch(/^\s+at /m);
  // The dev server's two lines, the failed model call and run (one line each), and the sentence.
  expect(ran.stderr.trim().split('\n').length).toBeLessThanOrEqual(6);
});

/** Runs `node <file>` in `dir` to its end (without blocking: the scripted model answers from here). */
function runNode(dir: string, file: string, env: NodeJS.ProcessEnv): Promise<Finished> {
  const child = spawn(process.execPath, [file], { cwd: dir, env });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), 180_000);
  return new Promise((resolve) =>
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
}

/** Starts a long-running `node <file>`; `ready` resolves once it prints `ready`. */
function startNode(dir: string, file: string, env: NodeJS.ProcessEnv) {
  const child = spawn(process.execPath, [file], { cwd: dir, env });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const ready = (async () => {
    const deadline = Date.now() + 120_000;
    while (!/ready/i.test(out)) {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`${file} did not get ready:\n${out}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  })();
  return { ready, exited, interrupt: () => child.kill('SIGINT') };
}

/**
 * A model for any snippet: it calls the first tool it is offered with arguments made from the
 * tool's schema and the user's message, then answers, as JSON under the requested schema when
 * structured output is asked for.
 */
function docsModel(req: ChatRequest): ChatAnswer {
  const user = lastOf(req, 'user');
  const last = req.messages[req.messages.length - 1];
  const tool = req.tools?.[0]?.function;
  if (last.role !== 'tool' && tool) return call([tool.name, sample(tool.parameters, user)]);
  const format = req.response_format as { json_schema?: { schema?: unknown } } | undefined;
  if (format?.json_schema?.schema) return answer(JSON.stringify(sample(format.json_schema.schema, user)));
  return answer(`The tool said: ${String(last.content)}`);
}

/** A value under a JSON Schema; strings are the message's last capitalised word (a city, an order number). */
function sample(schema: unknown, message: string): unknown {
  const s = (schema ?? {}) as Record<string, unknown>;
  if (Array.isArray(s.enum)) return s.enum[0];
  if (Array.isArray(s.anyOf)) return sample(s.anyOf[0], message);
  switch (s.type) {
    case 'object':
      return Object.fromEntries(
        Object.entries((s.properties ?? {}) as Record<string, unknown>).map(([k, v]) => [k, sample(v, message)]),
      );
    case 'array':
      return [sample(s.items, message)];
    case 'number':
    case 'integer':
      return 2;
    case 'boolean':
      return true;
    default:
      return (
        message
          .split(/\s+/)
          .map((w) => w.replace(/[^\w-]/g, ''))
          .filter((w) => /^[A-Z]/.test(w))
          .pop() ?? 'x'
      );
  }
}
