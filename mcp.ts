/**
 * `npm run mcp`: `durable-agents mcp` with this repository's example agents (src/cli/mcp-command.ts):
 * MCP tools over stdio, or streamable HTTP with `-- --http`.
 */
import { demoWorker } from './scripts/demo-agents/demo-worker';
import { runMain } from './src/cli/main';

runMain(['mcp', ...process.argv.slice(2)], { localWorker: demoWorker() });
