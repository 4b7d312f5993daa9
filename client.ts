/**
 * Command-line client of this repository (the published package offers the same as the
 * `durable-agents` bin). `node --import tsx client.ts --help` lists the commands.
 */
import { runMain } from './src/cli/main';
import { runMcpMain } from './src/mcp/run-mcp-main';

if (process.argv[2] === 'mcp') runMcpMain(process.argv.slice(3));
else runMain();
