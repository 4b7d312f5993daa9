#!/usr/bin/env node
/** The `durable-agents` command of the published package: the same client as `client.ts`, and `mcp` (the agents as an MCP server). */
import { runMain } from '../cli/main';
import { runMcpMain } from '../mcp/run-mcp-main';

if (process.argv[2] === 'mcp') runMcpMain(process.argv.slice(3));
else runMain();
