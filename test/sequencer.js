// @ts-check
const Sequencer = require('@jest/test-sequencer').default;

/**
 * The slowest test files first (seconds on a 2-core machine, from CI's run of the suite with 4 workers, 2026-11-29; update
 * them when a file's time changes much). Jest orders files by the times of its last run, which a
 * fresh clone (CI) does not have: it then goes by file size, and a long file that starts last
 * leaves one worker running it alone at the end. The rest follow as Jest orders them.
 */
const SECONDS = {
  'e2e/package.test.ts': 300,
  'e2e/conversation-cli.test.ts': 270,
  'e2e/docs.test.ts': 218,
  'interop/a2a-tck.test.ts': 200,
  'e2e/cli.test.ts': 186,
  'e2e/outages.test.ts': 185,
  'workflow/memory.test.ts': 176,
  'e2e/embedded.test.ts': 141,
  'e2e/react-chat.test.ts': 126,
  'e2e/fleet.test.ts': 111,
  'e2e/rolling-deploy.test.ts': 99,
  'workflow/memory-crash.test.ts': 80,
  'e2e/schedule-cli.test.ts': 77,
  'e2e/eval-cli.test.ts': 77,
  'e2e/mcp-cli.test.ts': 74,
  'e2e/mcp-conformance.test.ts': 70,
  'e2e/replay-cli.test.ts': 67,
  'workflow/model-failures.test.ts': 64,
  'workflow/encryption.test.ts': 63,
  'e2e/a2a-server.test.ts': 61,
  'interop/python-peers.test.ts': 57,
  'e2e/codec-server.test.ts': 56,
  'workflow/governed-model-calls.test.ts': 56,
  'e2e/tenant-budget.test.ts': 50,
  'workflow/mcp-tools.test.ts': 46,
  'e2e/mcp-real-servers.test.ts': 44,
  'e2e/ai-sdk-chat.test.ts': 42,
  'workflow/run-continue-as-new.test.ts': 40,
  'e2e/observability.test.ts': 40,
  'e2e/mcp-server.test.ts': 40,
  'workflow/conversation.test.ts': 39,
  'workflow/memory-store.test.ts': 39,
  'e2e/mcp-oauth.test.ts': 37,
  'workflow/agent-behaviour.test.ts': 36,
  'e2e/stream-recovery.test.ts': 36,
  'workflow/plugin.test.ts': 34,
  'workflow/http-api.test.ts': 32,
  'e2e/chat-page.test.ts': 32,
  'workflow/durable-waits.test.ts': 32,
  'e2e/a2a-restart.test.ts': 30,
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
