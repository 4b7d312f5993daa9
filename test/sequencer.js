// @ts-check
const Sequencer = require('@jest/test-sequencer').default;

/**
 * The slowest test files first (seconds on a 2-core machine, from CI's run of the suite with 4 workers, 2026-11-29; update
 * them when a file's time changes much). Jest orders files by the times of its last run, which a
 * fresh clone (CI) does not have: it then goes by file size, and a long file that starts last
 * leaves one worker running it alone at the end. The rest follow as Jest orders them.
 */
const SECONDS = {
  'e2e/package.test.ts': 476,
  'e2e/docs.test.ts': 319,
  'interop/a2a-tck.test.ts': 253,
  'workflow/memory.test.ts': 206,
  'e2e/react-chat.test.ts': 176,
  'e2e/outages.test.ts': 138,
  'e2e/conversation-cli.test.ts': 126,
  'e2e/mcp-conformance.test.ts': 105,
  'e2e/cli.test.ts': 102,
  'e2e/fleet.test.ts': 99,
  'e2e/embedded.test.ts': 97,
  'e2e/rolling-deploy.test.ts': 88,
  'workflow/model-failures.test.ts': 74,
  'workflow/memory-crash.test.ts': 73,
  'e2e/a2a-server.test.ts': 65,
  'workflow/encryption.test.ts': 63,
  'interop/python-peers.test.ts': 60,
  'e2e/live-fleet.test.ts': 60,
  'workflow/mcp-tools.test.ts': 59,
  'e2e/mcp-oauth.test.ts': 55,
  'workflow/conversation.test.ts': 54,
  'workflow/run-continue-as-new.test.ts': 50,
  'e2e/mcp-real-servers.test.ts': 47,
  'e2e/mcp-cli.test.ts': 40,
  'workflow/tenant-isolation.test.ts': 40,
  'e2e/workspace-cli.test.ts': 40,
  'workflow/http-api.test.ts': 38,
  'workflow/agent-behaviour.test.ts': 37,
  'e2e/mcp-server.test.ts': 35,
  'e2e/tenant-budget.test.ts': 35,
  'e2e/chat-page.test.ts': 35,
  'workflow/durable-waits.test.ts': 35,
  'e2e/ai-sdk-chat.test.ts': 34,
  'unit/api-report.test.ts': 34,
  'workflow/search-attributes.test.ts': 32,
  'e2e/schedule-cli.test.ts': 31,
  'workflow/memory-store.test.ts': 31,
  'workflow/busy-and-stop.test.ts': 31,
  'workflow/compaction.test.ts': 30,
  'e2e/replay-cli.test.ts': 29,
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
