// @ts-check
const Sequencer = require('@jest/test-sequencer').default;

/**
 * The slowest test files first (seconds on a 2-core machine, from CI's run of the suite with 4 workers, 2026-11-29; update
 * them when a file's time changes much). Jest orders files by the times of its last run, which a
 * fresh clone (CI) does not have: it then goes by file size, and a long file that starts last
 * leaves one worker running it alone at the end. The rest follow as Jest orders them.
 */
const SECONDS = {
  'e2e/package.test.ts': 292,
  'e2e/docs.test.ts': 206,
  'e2e/conversation-cli.test.ts': 201,
  'workflow/memory.test.ts': 139,
  'e2e/react-chat.test.ts': 136,
  'interop/a2a-tck.test.ts': 134,
  'e2e/outages.test.ts': 131,
  'e2e/cli.test.ts': 121,
  'e2e/rolling-deploy.test.ts': 121,
  'e2e/fleet.test.ts': 97,
  'e2e/mcp-conformance.test.ts': 87,
  'e2e/embedded.test.ts': 80,
  'workflow/memory-crash.test.ts': 71,
  'workflow/model-failures.test.ts': 70,
  'workflow/encryption.test.ts': 67,
  'e2e/mcp-cli.test.ts': 64,
  'interop/python-peers.test.ts': 61,
  'workflow/governed-model-calls.test.ts': 61,
  'workflow/mcp-tools.test.ts': 51,
  'e2e/replay-cli.test.ts': 49,
  'e2e/schedule-cli.test.ts': 46,
  'workflow/conversation.test.ts': 46,
  'workflow/run-continue-as-new.test.ts': 45,
  'workflow/tenant-isolation.test.ts': 44,
  'e2e/workspace-cli.test.ts': 41,
  'e2e/mcp-real-servers.test.ts': 41,
  'e2e/mcp-oauth.test.ts': 41,
  'e2e/eval-cli.test.ts': 40,
  'e2e/a2a-server.test.ts': 39,
  'e2e/mcp-server.test.ts': 38,
  'workflow/agent-behaviour.test.ts': 36,
  'workflow/workspaces.test.ts': 31,
  'workflow/memory-store.test.ts': 35,
  'e2e/ai-sdk-chat.test.ts': 35,
  'unit/api-report.test.ts': 34,
  'e2e/codec-server.test.ts': 33,
  'e2e/tenant-budget.test.ts': 31,
  'e2e/mcp-server-modern.test.ts': 30,
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
