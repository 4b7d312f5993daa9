// @ts-check
const Sequencer = require('@jest/test-sequencer').default;

/**
 * The slowest test files first (seconds on a 2-core machine, from a run of the suite; update
 * them when a file's time changes much). Jest orders files by the times of its last run, which a
 * fresh clone (CI) does not have: it then goes by file size, and a long file that starts last
 * leaves one worker running it alone at the end. The rest follow as Jest orders them.
 */
const SECONDS = {
  'e2e/package.test.ts': 150,
  'interop/a2a-tck.test.ts': 100,
  'interop/python-peers.test.ts': 35,
  'e2e/conversation-cli.test.ts': 110,
  'e2e/docs.test.ts': 110,
  'e2e/outages.test.ts': 100,
  'e2e/package-node-versions.test.ts': 90,
  'e2e/cli.test.ts': 85,
  'e2e/rolling-deploy.test.ts': 75,
  'e2e/fleet.test.ts': 65,
  'e2e/mcp-conformance.test.ts': 55,
  'e2e/embedded.test.ts': 55,
  'workflow/memory.test.ts': 50,
  'workflow/memory-crash.test.ts': 45,
  'workflow/encryption.test.ts': 45,
  'e2e/a2a-restart.test.ts': 40,
  'e2e/ai-sdk-chat.test.ts': 35,
  'e2e/react-chat.test.ts': 30,
  'workflow/model-failures.test.ts': 30,
  'e2e/eval-cli.test.ts': 30,
  'e2e/schedule-cli.test.ts': 30,
  'e2e/mcp-cli.test.ts': 28,
  'e2e/replay-cli.test.ts': 27,
  'e2e/codec-server.test.ts': 25,
};

const secondsOf = (path) => {
  const key = Object.keys(SECONDS).find((k) => path.replace(/\\/g, '/').endsWith(`/test/${k}`));
  return key ? SECONDS[key] : 0;
};

class SlowestFirst extends Sequencer {
  sort(tests) {
    const ordered = super.sort(tests);
    // Array.prototype.sort is stable: files without a known time keep Jest's order after the known ones.
    return [...ordered].sort((a, b) => secondsOf(b.path) - secondsOf(a.path));
  }
}

module.exports = SlowestFirst;
