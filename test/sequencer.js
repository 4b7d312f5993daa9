// @ts-check
const Sequencer = require('@jest/test-sequencer').default;

/**
 * The slowest test files first (seconds on a 2-core machine, from a run of the suite with 4 workers; update
 * them when a file's time changes much). Jest orders files by the times of its last run, which a
 * fresh clone (CI) does not have: it then goes by file size, and a long file that starts last
 * leaves one worker running it alone at the end. The rest follow as Jest orders them.
 */
const SECONDS = {
  'e2e/package.test.ts': 202,
  'e2e/docs.test.ts': 152,
  'e2e/conversation-cli.test.ts': 127,
  'interop/a2a-tck.test.ts': 126,
  'e2e/package-node-versions.test.ts': 126,
  'e2e/outages.test.ts': 114,
  'e2e/mcp-conformance.test.ts': 95,
  'e2e/rolling-deploy.test.ts': 90,
  'e2e/react-chat.test.ts': 90,
  'workflow/memory.test.ts': 89,
  'e2e/cli.test.ts': 86,
  'e2e/embedded.test.ts': 82,
  'e2e/fleet.test.ts': 81,
  'workflow/encryption.test.ts': 78,
  'e2e/a2a-server.test.ts': 61,
  'workflow/model-failures.test.ts': 56,
  'workflow/memory-crash.test.ts': 52,
  'e2e/mcp-cli.test.ts': 51,
  'e2e/replay-cli.test.ts': 49,
  'e2e/a2a-restart.test.ts': 46,
  'interop/python-peers.test.ts': 44,
  'workflow/mcp-tools.test.ts': 43,
  'e2e/codec-server.test.ts': 41,
  'e2e/schedule-cli.test.ts': 40,
  'workflow/conversation.test.ts': 32,
  'e2e/mcp-real-servers.test.ts': 32,
  'workflow/agent-behaviour.test.ts': 32,
  'workflow/memory-store.test.ts': 31,
  'e2e/eval-cli.test.ts': 30,
  'workflow/durable-waits.test.ts': 28,
  'e2e/tenant-budget.test.ts': 27,
  'e2e/ai-sdk-chat.test.ts': 26,
  'e2e/chat-page.test.ts': 26,
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
