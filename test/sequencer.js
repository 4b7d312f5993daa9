// @ts-check
const Sequencer = require('@jest/test-sequencer').default;

/**
 * The slowest test files first (seconds on a 2-core machine, from a run of the suite with 4 workers, 2026-11-29; update
 * them when a file's time changes much). Jest orders files by the times of its last run, which a
 * fresh clone (CI) does not have: it then goes by file size, and a long file that starts last
 * leaves one worker running it alone at the end. The rest follow as Jest orders them.
 */
const SECONDS = {
  'e2e/package.test.ts': 329,
  'workflow/memory.test.ts': 241,
  'e2e/package-node-versions.test.ts': 237,
  'e2e/docs.test.ts': 230,
  'e2e/cli.test.ts': 189,
  'e2e/react-chat.test.ts': 182,
  'e2e/conversation-cli.test.ts': 153,
  'e2e/embedded.test.ts': 136,
  'e2e/outages.test.ts': 128,
  'e2e/mcp-conformance.test.ts': 128,
  'e2e/rolling-deploy.test.ts': 113,
  'e2e/fleet.test.ts': 113,
  'workflow/governed-model-calls.test.ts': 78,
  'workflow/encryption.test.ts': 70,
  'workflow/tenant-isolation.test.ts': 68,
  'e2e/mcp-oauth.test.ts': 67,
  'workflow/run-continue-as-new.test.ts': 64,
  'interop/python-peers.test.ts': 61,
  'e2e/a2a-server.test.ts': 59,
  'workflow/memory-crash.test.ts': 52,
  'e2e/mcp-cli.test.ts': 52,
  'e2e/replay-cli.test.ts': 52,
  'workflow/mcp-tools.test.ts': 52,
  'workflow/durable-waits.test.ts': 51,
  'workflow/agent-behaviour.test.ts': 50,
  'workflow/conversation.test.ts': 48,
  'e2e/ai-sdk-chat.test.ts': 48,
  'workflow/memory-store.test.ts': 47,
  'e2e/mcp-real-servers.test.ts': 43,
  'workflow/model-failures.test.ts': 42,
  'e2e/schedule-cli.test.ts': 41,
  'e2e/chat-page.test.ts': 38,
  'e2e/tenant-budget.test.ts': 37,
  'e2e/codec-server.test.ts': 35,
  'workflow/http-api.test.ts': 35,
  'e2e/mcp-server.test.ts': 33,
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
