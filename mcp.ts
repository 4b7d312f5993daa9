/**
 * `npm run mcp`: serves this repository's agents (those of the workers on AGENT_TASK_QUEUE) as MCP
 * tools over stdio; `npm run mcp -- --http` over streamable HTTP. See src/mcp/serve-mcp.ts.
 */
import { runMcpMain } from './src/mcp/run-mcp-main';

runMcpMain();
