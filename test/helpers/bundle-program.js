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
 * source file's place (the workers hand `src/workflows` to Temporal's bundler by path, the chat
 * page reads its HTML beside its module).
 */
const { existsSync, readFileSync, renameSync, statSync } = require('node:fs');
const { dirname, resolve } = require('node:path');
const esbuild = require('esbuild');

const [entry, out] = process.argv.slice(2);

/** A relative path a source file resolves, as the absolute path of the file it names (a `.ts` one for `./x` or `./x.js`). */
function absolute(dir, path) {
  const full = resolve(dir, path);
  const base = full.replace(/\.js$/, '');
  return [full, `${base}.ts`, `${base}/index.ts`].find((f) => existsSync(f) && !statSync(f).isDirectory()) ?? full;
}

/** @type {import('esbuild').Plugin} */
const sourcePlaces = {
  name: 'source-places',
  setup(build) {
    build.onLoad({ filter: /\.ts$/ }, (args) => {
      const dir = dirname(args.path);
      const contents = readFileSync(args.path, 'utf8')
        .replace(/\b__dirname\b/g, JSON.stringify(dir))
        .replace(/\b__filename\b/g, JSON.stringify(args.path))
        .replace(
          /require\.resolve\((['"])(\.{1,2}\/[^'"]+)\1\)/g,
          (_, _q, path) => `require.resolve(${JSON.stringify(absolute(dir, path))})`,
        );
      return { contents, loader: 'ts' };
    });
  },
};

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
