#!/usr/bin/env node
/**
 * The `durable-agents` command of the published package: the same client as `client.ts`, `mcp`
 * (the agents as an MCP server) and `codec-server` (decrypting payloads for the Temporal UI).
 */
import { runMain } from '../cli/main';
import { serveCodec } from '../codec/serve-codec';
import { runMcpMain } from '../mcp/run-mcp-main';

if (process.argv[2] === 'mcp') runMcpMain(process.argv.slice(3));
else if (process.argv[2] === 'codec-server') {
  serveCodec().then(
    () => process.exit(0),
    (err: Error) => {
      console.error(`durable-agents codec-server: ${err.message}`);
      process.exit(1);
    },
  );
} else runMain();
