/**
 * `npm run codec-server`: `durable-agents codec-server` (src/cli/codec-server-command.ts), which
 * decrypts payloads encrypted with AGENT_ENCRYPTION_KEYS for the Temporal Web UI and CLI.
 */
import { runMain } from './src/cli/main';

runMain(['codec-server', ...process.argv.slice(2)]);
