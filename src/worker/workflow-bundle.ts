import { dirname, sep } from 'node:path';
import type { BundleOptions, ReplayWorkerOptions, WorkerOptions } from '@temporalio/worker';
import type { WorkflowBundleCache } from './bundle-cache';

/**
 * Worker (or replay worker) options that start from the cached workflow bundle when there is one
 * (no webpack at all), and otherwise save the bundle the SDK is about to make. `inputs` are what
 * else goes into the bundle (the plugin's own bundler settings). Left as they are when the worker
 * has no `workflowsPath`, brings its own bundle, or has another plugin that configures the bundler
 * (what that plugin adds cannot be known here, so its bundle could not be keyed).
 */
export function withBundleCache<T extends WorkerOptions | ReplayWorkerOptions>(
  options: T,
  cache: WorkflowBundleCache | undefined,
  inputs: Record<string, unknown>,
  self: object,
): T {
  if (!cache || !options.workflowsPath || options.workflowBundle) return options;
  const plugins = (options.plugins ?? []) as ReadonlyArray<{ configureBundler?: unknown }>;
  if (plugins.some((p) => p !== self && p.configureBundler !== undefined)) return options;
  const key = cache.key(
    {
      workflowsPath: options.workflowsPath,
      workflowInterceptorModules: options.interceptors?.workflowModules,
      payloadConverterPath: options.dataConverter?.payloadConverterPath,
      failureConverterPath: options.dataConverter?.failureConverterPath,
      ignoreModules: options.bundlerOptions?.ignoreModules,
      preloadModules: options.bundlerOptions?.preloadModules,
      webpackConfigHook: options.bundlerOptions?.webpackConfigHook,
    },
    inputs,
  );
  const code = cache.lookup(key);
  if (code !== undefined) {
    // The bundle has the workflows, interceptors and converters in it already; the SDK warns when
    // it is also given what to bundle.
    const { workflowsPath: _path, bundlerOptions: _bundler, ...rest } = options;
    const interceptors = options.interceptors ? { ...options.interceptors, workflowModules: undefined } : undefined;
    return { ...rest, ...(interceptors ? { interceptors } : {}), workflowBundle: { code } } as T;
  }
  const hook = options.bundlerOptions?.webpackConfigHook;
  return {
    ...options,
    bundlerOptions: {
      ...options.bundlerOptions,
      webpackConfigHook: (config: WebpackConfig) => {
        const c = hook ? hook(config) : config;
        return { ...c, plugins: [...(c.plugins ?? []), saveToCache(cache, key) as never] };
      },
    },
  };
}

/**
 * A webpack plugin that saves the bundle it made, and the files it read, to the cache. The bundle
 * is taken as it is written (after emitting, webpack keeps only the sizes of its assets).
 */
function saveToCache(cache: WorkflowBundleCache, key: string) {
  return {
    apply(compiler: EmittingCompiler) {
      let code: string | undefined;
      compiler.hooks.assetEmitted.tap('durable-agents-bundle-cache', (file, { content }) => {
        if (file.endsWith('.js')) code = content.toString('utf8');
      });
      compiler.hooks.afterEmit.tap('durable-agents-bundle-cache', (compilation) => {
        if (code !== undefined && compilation.errors.length === 0) cache.save(key, code, compilation.fileDependencies);
      });
    },
  };
}

interface EmittingCompiler {
  hooks: {
    assetEmitted: { tap(name: string, fn: (file: string, info: { content: Buffer }) => void): void };
    afterEmit: {
      tap(name: string, fn: (compilation: { errors: unknown[]; fileDependencies: Iterable<string> }) => void): void;
    };
  };
}

/**
 * Bundler options with the agent workflows in them: alone when the bundle has no workflows of
 * the user's (`workflowsPath` is ours), else joined with theirs in one module. `quiet` cuts
 * webpack's report to a line (see {@link quietReport}).
 */
export function withAgentWorkflows(configured: BundleOptions, agentWorkflows: string, quiet: boolean): BundleOptions {
  const hook = configured.webpackConfigHook;
  if (configured.workflowsPath === agentWorkflows) {
    return quiet
      ? { ...configured, webpackConfigHook: (config) => quietReport(hook ? hook(config) : config) }
      : configured;
  }
  // The user's workflows and ours, in one module: a static file that requires theirs under an
  // alias. The bundler resolves its entrypoint's imports (@temporalio/workflow) from next to
  // workflowsPath, so webpack is also told where the user's workflows find @temporalio/workflow:
  // the bundle keeps one copy, theirs.
  const userWorkflows = configured.workflowsPath;
  const modules = nodeModulesOf(require.resolve('@temporalio/workflow', { paths: [dirname(userWorkflows)] }));
  return {
    ...configured,
    workflowsPath: AGENT_AND_USER_WORKFLOWS,
    webpackConfigHook: (config) => {
      const c = hook ? hook(config) : config;
      const combined = {
        ...c,
        resolve: {
          ...c.resolve,
          modules: [...(c.resolve?.modules ?? ['node_modules']), modules],
          alias: { ...c.resolve?.alias, [`${USER_WORKFLOWS}$`]: userWorkflows },
        },
      };
      return quiet ? quietReport(combined) : combined;
    },
  };
}

/** The module that joins the user's workflows (required as {@link USER_WORKFLOWS}) and ours. */
const AGENT_AND_USER_WORKFLOWS = require.resolve('./agent-and-user-workflows.js');
/** The request by which that module requires the user's workflows; the bundler aliases it to their workflowsPath. */
const USER_WORKFLOWS = '__durable_agents_user_workflows__';

/** The `node_modules` directory a resolved module file lives in. */
function nodeModulesOf(file: string): string {
  const at = file.lastIndexOf(`${sep}node_modules${sep}`);
  if (at < 0) throw new Error(`cannot tell which node_modules holds ${file}`);
  return file.slice(0, at + `${sep}node_modules`.length);
}

type WebpackConfig = Parameters<NonNullable<BundleOptions['webpackConfigHook']>>[0];

/**
 * Webpack's report of the workflow bundle, cut to its errors and warnings and one summary line.
 * The SDK logs the full report (about 20 lines listing module paths) at INFO on every worker
 * start; a worker's log is for what happens to its runs. `bundlerReport: 'full'` keeps it.
 */
function quietReport(config: WebpackConfig): WebpackConfig {
  const plugin = {
    apply(compiler: {
      hooks: {
        done: {
          tap(
            name: string,
            fn: (stats: {
              toString(o?: object): string;
              endTime: number;
              startTime: number;
              compilation: { modules: { size: number } };
            }) => void,
          ): void;
        };
      };
    }) {
      compiler.hooks.done.tap('durable-agents-quiet-report', (stats) => {
        const full = stats.toString.bind(stats);
        stats.toString = (options?: object) => {
          const problems = full({ ...options, all: false, errors: true, warnings: true, errorDetails: true }).trim();
          return (
            problems || `bundled ${stats.compilation.modules.size} modules in ${stats.endTime - stats.startTime} ms`
          );
        };
      });
    },
  };
  return { ...config, plugins: [...(config.plugins ?? []), plugin as never] };
}
