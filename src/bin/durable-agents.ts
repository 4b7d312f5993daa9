#!/usr/bin/env node
/**
 * The `durable-agents` command of the published package: the client (runs, conversations,
 * listing), `mcp` (the agents as an MCP server), `a2a` (the agents as A2A agents), `codec-server` (decrypting payloads for the
 * Temporal UI) and `install-temporal`. It is a client of the user's own workers: unlike this
 * repository's `client.ts`, it never runs agents itself, and never the example agents.
 */
import { runMain } from '../cli/main';
import { serveCodec } from '../cli/codec-server-command';
import { runMcpMain, runServerMain } from '../cli/run-mcp-main';
import { wantsHelp } from '../cli/help';
import { exitWhenFlushed } from '../cli/exit';

// `<command> --help` is the main program's, whatever the command.
const [command, ...args] = process.argv.slice(2);
if (command === 'mcp') runMcpMain(args);
else if (command === 'a2a') runServerMain('a2a', args);
else if (command === 'codec-server' && !wantsHelp(args)) {
  serveCodec(process.env).then(
    () => exitWhenFlushed(0),
    (err: Error) => {
      console.error(`durable-agents codec-server: ${err.message}`);
      exitWhenFlushed(1);
    },
  );
} else runMain();
