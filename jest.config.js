/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.ts$': 'ts-jest',
    // jose (under @a2a-js/sdk) is ESM-only: Node 20.19+ requires it as it is, Jest's module system
    // cannot, so Jest gets it as CommonJS.
    // So is the MCP tasks extension's package, whose 2026-07-28 schemas check our server's answers.
    '/node_modules/(jose|@modelcontextprotocol/ext-tasks)/.+\\.js$': [
      'ts-jest',
      { tsconfig: { allowJs: true }, isolatedModules: true },
    ],
    // PGlite (the embedded memory store) loads Node's modules with import(): see the transform.
    '/node_modules/@electric-sql/.+\\.cjs$': '<rootDir>/test/require-builtins-transform.js',
  },
  transformIgnorePatterns: ['/node_modules/(?!jose/|@modelcontextprotocol/ext-tasks/|@electric-sql/)'],
  // Its package exports only `import` conditions, which Jest's CommonJS resolver does not take.
  moduleNameMapper: {
    '^@modelcontextprotocol/ext-tasks/core/v2$':
      '<rootDir>/node_modules/@modelcontextprotocol/ext-tasks/dist/core/v2/index.js',
  },
  // One in-memory Temporal dev server and one workflow bundle for the whole suite.
  globalSetup: '<rootDir>/test/global-setup.ts',
  globalTeardown: '<rootDir>/test/global-teardown.ts',
  testTimeout: 90_000,
  // Two more workers than the 2 cores the suite is sized for: most end-to-end files spend their
  // time waiting (on child processes, timers, a server that restarts), and other files run
  // meanwhile (the suite took 840 s with 2 workers, 654 s with 3; on another machine 828 s with 3,
  // 743 s with 4). The contention slows the end-to-end files; the one race it showed (a chat page
  // that began watching just after a turn started) was a real bug, mended.
  maxWorkers: 4,
  // The slowest files first (see test/sequencer.js), so no long file is left running alone at the end.
  testSequencer: '<rootDir>/test/sequencer.js',
};
