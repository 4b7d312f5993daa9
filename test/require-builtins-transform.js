/**
 * A Jest transform for PGlite's CommonJS build, which loads Node's built-in modules with dynamic
 * `import("fs")`: Jest's module system runs CommonJS without ESM support unless Node runs with
 * --experimental-vm-modules, so those calls fail inside a test. Here they become `require`s,
 * which is what they do in Node; nothing else in the files changes. (Through a name of its own:
 * the Emscripten module declares a `require` of its own in the function that imports.)
 */
const { createHash } = require('node:crypto');
const { readFileSync } = require('node:fs');

const self = readFileSync(__filename, 'utf8');

module.exports = {
  // The file and this transform: a changed transform is applied again, not read from Jest's cache.
  getCacheKey: (source) => createHash('sha256').update(self).update(source).digest('hex'),
  process(source) {
    const code = source.replace(
      /\bimport\((["'])(node:)?([a-z_/]+)\1\)/g,
      (_, q, node, name) => `Promise.resolve(__requireBuiltin(${q}${node ?? ''}${name}${q}))`,
    );
    return { code: code === source ? source : `var __requireBuiltin = require;${code}` };
  },
};
