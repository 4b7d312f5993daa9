// @ts-check
import tseslint from 'typescript-eslint';
import importX from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';
import { builtinModules } from 'node:module';
import { readdirSync } from 'node:fs';

const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];

/**
 * The layers of src/, from the bottom up. A folder may import from its own layer and those below;
 * `boundary(from, forbidden)` below says which it must not reach. See docs/architecture.md.
 *
 *   core        pure decisions: plain TypeScript, no Temporal, no IO
 *   contracts   the activity interface, the workflows' names, queries, updates and signals (workflow-safe)
 *   workflows   deterministic workflow code
 *   codec, storage, memory-store, telemetry   Node-side building blocks (memory-store: facts kept across conversations)
 *   models      the model seam (ChatModel) and one folder per provider
 *   tools       defineTool, the registry, the MCP client (servers as a tool source), the A2A client
 *   agents      defineAgent, defineGuardrail and their registries
 *   activities  what workflows call: model calls, tool calls, summaries, guardrails
 *   connection  reaching Temporal: environment, dev server, Temporal CLI
 *   worker      the plugin, createAgentWorker, the workflow bundle, replay
 *   client      runs, conversations, streams, listing: what CLI, HTTP and MCP share
 *   a2a         the agents as A2A agents, built on the client
 *   http, mcp-server   servers built on the client (the HTTP API mounts use-chat, AG-UI and A2A)
 *   cli, testing, bin, entry points
 *   ui          the browser's part (a chat transport): stands alone, imports nothing of the rest
 */
const deterministic = ['src/core', 'src/contracts', 'src/workflows'];

/**
 * The layers inside src/core, from the bottom up: the shared state types low, the loop and the
 * conversation on top. A folder imports only from the rows below its own (not from its row's
 * other folders), so each row can be read knowing only those below. See docs/architecture.md.
 */
const coreLayers = [
  ['messages', 'fleet'], // messages, tool descriptions and results; tenants, budgets' ledger, rate governor
  ['facts'], // long-term memory: what a fact is, whose it is
  ['state'], // a run's state, options, limits, results; the carry's versions
  ['context', 'events', 'guardrails', 'policies', 'time'], // the context window; events; guardrail checks; policies' requests and decisions; durations and waits
  ['tool-calls', 'workspace'], // approvals, handoffs, agents as tools, questions; workspace states, options and tools
  ['run'], // the loop: next step, input, result, carry, search attributes
  ['conversation'], // many turns, branches, busy policies, forgetting
  ['schedules'], // what a schedule may start
];
const coreFolders = readdirSync(new URL('./src/core', import.meta.url), { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name);
const unplaced = coreFolders.filter((f) => !coreLayers.flat().includes(f));
if (unplaced.length > 0)
  throw new Error(
    `eslint.config.mjs: add src/core/${unplaced.join(', src/core/')} to coreLayers, on the row its imports allow`,
  );

/** One zone per core folder: the folders on its own row and the rows above it are out of its reach. */
const coreZones = coreLayers.flatMap((row, i) =>
  row.map((folder) => ({
    target: `./src/core/${folder}`,
    from: coreLayers
      .slice(i)
      .flat()
      .filter((other) => other !== folder)
      .map((other) => `./src/core/${other}`),
    message: `src/core/${folder} is on row ${i + 1} of coreLayers (eslint.config.mjs): it imports only from the rows below`,
  })),
);

/**
 * A relative import of one of the folders of src/ from another folder (not a package of the same
 * name, like `@temporalio/client`, nor a file of the same name in the importer's own folder).
 */
const folderImport = (folders) => `^(\\.\\./)+(${folders.join('|')})(/|$)`;

/** A no-restricted-imports rule: files under `from` must not import from `folders` (type imports allowed where `types`). */
function boundary(from, folders, message, types = false) {
  return {
    files: from.map((f) => `${f}/**/*.ts`),
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        { patterns: [{ regex: folderImport(folders), allowTypeImports: types, message }] },
      ],
    },
  };
}

export default tseslint.config(
  {
    ignores: [
      'node_modules/**',
      'dist/**',
      'examples/**',
      '.tools/**',
      '.temporal/**',
      'coverage/**',
      'bench/peer/**',
      '**/*.mjs',
      'jest.config.js',
      'test/sequencer.js', // loaded by Jest itself, like its config
      'test/require-builtins-transform.js',
      'test/helpers/bundle-program.js', // a plain Node program the tests run (no TypeScript to load)
      'docs/api-reference/**',
    ],
  },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', ignoreRestSiblings: true }],
    },
  },
  {
    // No import circles anywhere in the library.
    files: ['src/**/*.ts'],
    plugins: { 'import-x': importX },
    settings: {
      ...importX.flatConfigs.typescript.settings,
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: './tsconfig.json' })],
    },
    rules: {
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      'import-x/no-restricted-paths': ['error', { zones: coreZones.filter((z) => z.from.length > 0) }],
    },
  },
  {
    // Every workflow patch is declared in one registry, with its reason and how long it stays.
    files: ['src/**/*.ts'],
    ignores: ['src/workflows/patches.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        ...[
          'ImportSpecifier[imported.name=/^(patched|deprecatePatch)$/]',
          'CallExpression[callee.property.name=/^(patched|deprecatePatch)$/]',
        ].map((selector) => ({
          selector,
          message:
            'workflow patches live in src/workflows/patches.ts: add the patch there (since, why, until) and ask isPatched(id)',
        })),
      ],
    },
  },
  {
    // Workflow code is replayed and must stay deterministic; the core and the contracts are imported by it.
    files: deterministic.map((f) => `${f}/**/*.ts`),
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [...nodeBuiltins, 'openai', 'zod'].map((name) => ({
            name,
            message: 'workflow-side code must not do IO or import worker-side libraries',
          })),
          patterns: [
            {
              regex: folderImport([
                'models',
                'tools',
                'agents',
                'activities',
                'worker',
                'client',
                'connection',
                'cli',
                'http',
                'mcp-server',
                'a2a',
                'codec',
                'storage',
                'memory-store',
                'telemetry',
                'testing',
              ]),
              allowTypeImports: true,
              message: 'workflow-side code may only `import type` from Node-side code',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src/core/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['@temporalio/*'], message: 'the core is plain TypeScript: no Temporal imports' }] },
      ],
    },
  },
  {
    // Settings are read once, at the edge: the settings modules and the program entry points read
    // the environment; everything below them is given what they read.
    files: ['src/**/*.ts'],
    ignores: ['src/worker/settings.ts', 'src/connection/settings.ts', 'src/bin/**'],
    rules: {
      'no-restricted-properties': [
        'error',
        {
          object: 'process',
          property: 'env',
          message:
            'read the environment in workerSettings (src/worker/settings.ts) or clientSettings (src/connection/settings.ts) and pass what it says down',
        },
      ],
    },
  },
  boundary(
    ['src/codec', 'src/storage', 'src/memory-store', 'src/telemetry'],
    [
      'models',
      'tools',
      'agents',
      'activities',
      'connection',
      'worker',
      'client',
      'cli',
      'http',
      'mcp-server',
      'a2a',
      'workflows',
      'testing',
    ],
    'building blocks stay below the sides that use them',
  ),
  boundary(
    ['src/models'],
    ['tools', 'agents', 'activities', 'connection', 'worker', 'client', 'cli', 'http', 'mcp-server', 'a2a', 'testing'],
    'the model seam knows no tools, agents or Temporal sides: they are built on it',
  ),
  boundary(
    ['src/tools'],
    ['agents', 'activities', 'connection', 'worker', 'client', 'cli', 'http', 'mcp-server', 'a2a', 'testing'],
    'tools are defined below the agents and activities that use them',
  ),
  boundary(
    ['src/agents'],
    ['activities', 'connection', 'worker', 'client', 'cli', 'http', 'mcp-server', 'a2a', 'testing'],
    'agents are defined below the activities and the worker that run them',
  ),
  boundary(
    ['src/activities'],
    ['connection', 'worker', 'client', 'cli', 'http', 'mcp-server', 'a2a', 'testing'],
    'activities are what the worker registers: they do not reach up to it',
  ),
  boundary(
    ['src/client', 'src/connection'],
    ['activities', 'agents', 'tools', 'worker', 'cli', 'http', 'mcp-server', 'a2a', 'testing'],
    'clients never import worker code (not even its types: take what you need by shape) or the surfaces built on them',
  ),
  boundary(
    ['src/worker'],
    ['client', 'cli', 'http', 'mcp-server', 'a2a', 'testing'],
    'the worker never imports client code or the surfaces',
  ),
  boundary(
    ['src/a2a'],
    ['activities', 'agents', 'tools', 'worker', 'cli', 'http', 'mcp-server', 'testing'],
    'the A2A server is built on the client, not on the worker, the command line or the HTTP API that mounts it',
  ),
  boundary(
    ['src/http', 'src/mcp-server'],
    ['activities', 'agents', 'tools', 'worker', 'cli', 'testing'],
    'servers are built on the client, not on the worker or the command line',
  ),
  {
    // The browser's part stands alone: it is bundled into pages, with nothing of Node or Temporal.
    files: ['src/ui/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: nodeBuiltins.map((name) => ({ name, message: 'src/ui runs in browsers' })),
          patterns: [
            { regex: '^\\.\\./', message: 'src/ui runs in browsers: it imports nothing of the rest of the package' },
            { group: ['@temporalio/*'], message: 'src/ui runs in browsers' },
          ],
        },
      ],
    },
  },
);
