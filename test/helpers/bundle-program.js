// @ts-check
/**
 * Bundles one TypeScript program of this repository (an entry point such as `client.ts`, or a test
 * fixture) into one CommonJS file, for the tests that start it as a child process:
 * `node bundle-program.js <entry.ts> <out.cjs>`.
 *
 * Why: a program run through tsx's loader spends about 0.6 s of CPU resolving and loading its few
 * hundred TypeScript modules one by one, and the suite starts some 330 of them on two cores. The
 * bundle loads in half the time. Only this repository's code is bundled; packages stay `require`d
 * from node_modules (the bundle lives under node_modules/.cache, so they resolve as from the
 * sources). Each file's `__dirname`, `__filename` and relative `require.resolve` keep naming the
 * source file's place (the chat page reads its HTML beside its module; see the prelude below).
 */
const { readFileSync, renameSync } = require('node:fs');
const { dirname, resolve } = require('node:path');
const esbuild = require('esbuild');

const [entry, out] = process.argv.slice(2);

/** @type {import('esbuild').Plugin} */
const sourcePlaces = {
  name: 'source-places',
  setup(build) {
    build.onLoad({ filter: /\.ts$/ }, (args) => {
      const dir = JSON.stringify(dirname(args.path));
      const contents = readFileSync(args.path, 'utf8')
        .replace(/\b__dirname\b/g, dir)
        .replace(/\b__filename\b/g, JSON.stringify(args.path))
        .replace(/\brequire\.resolve\(/g, `__sourceResolve(${dir})(`);
      return { contents, loader: 'ts' };
    });
  },
};

/**
 * Run first in the bundle: the program sees its own path as `process.argv[1]` (its usage lines
 * name `client.ts`); a relative `require.resolve` resolves from its source file's directory (a
 * worker hands Temporal's bundler `src/workflows` by path, a `./x.js` written for `./x.ts`
 * included); and a `.ts` file required at run time (a failure converter Temporal's worker
 * requires by path) is compiled by esbuild, as tsx would.
 */
const prelude = `
process.argv[1] = ${JSON.stringify(resolve(entry))};
require.extensions['.ts'] ??= (module, filename) => {
  const { outputFiles } = require('esbuild').buildSync({
    entryPoints: [filename], bundle: true, platform: 'node', format: 'cjs', packages: 'external', write: false,
  });
  module._compile(outputFiles[0].text, filename);
};
var __sourceResolve = (dir) => (path, options) => {
  if (!path.startsWith('./') && !path.startsWith('../')) return require.resolve(path, options);
  const full = require('node:path').resolve(dir, path);
  try {
    return require.resolve(full, options);
  } catch (err) {
    if (!full.endsWith('.js')) throw err;
    return require.resolve(full.slice(0, -3) + '.ts', options);
  }
};
`;

const partial = `${out}.${process.pid}`;
esbuild
  .build({
    entryPoints: [entry],
    outfile: partial,
    bundle: true,
    platform: 'node',
    target: `node${process.versions.node.split('.')[0]}`,
    format: 'cjs',
    packages: 'external',
    plugins: [sourcePlaces],
    banner: { js: prelude },
    // No source map (loading one costs time): to read a child's stack trace against the
    // sources, run the tests with TEST_PROGRAMS_TSX=1 (the programs then run through tsx).
    logLevel: 'error',
  })
  .then(() => {
    // Whole or not at all: another test file may be bundling the same program at this moment.
    renameSync(partial, out);
  })
  .catch(() => {
    process.exitCode = 1;
  });
