/**
 * `npm run mcp`: serves this repository's agents (those of the workers on AGENT_TASK_QUEUE) as MCP
 * tools over stdio; `npm run mcp -- --http` over streamable HTTP. See src/cli/mcp-command.ts. With
 * the embedded dev server it runs the example agents in its own process, as client.ts does.
 */
import { demoWorker } from './scripts/demo-agents/demo-worker';
import { runMcpMain } from './src/cli/run-mcp-main';

runMcpMain(process.argv.slice(2), { localWorker: demoWorker() });
