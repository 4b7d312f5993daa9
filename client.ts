/**
 * Command-line client of this repository (the published package offers the same as the
 * `durable-agents` bin). `node --import tsx client.ts --help` lists the commands. Unlike the bin,
 * it runs the example agents in its own process while the dev server is embedded, so it works on
 * its own here.
 */
import { demoWorker } from './scripts/demo-agents/demo-worker';
import { runMain } from './src/cli/main';
import { runMcpMain, runServerMain } from './src/cli/run-mcp-main';

if (process.argv[2] === 'mcp') runMcpMain(process.argv.slice(3), { localWorker: demoWorker() });
else if (process.argv[2] === 'a2a') runServerMain('a2a', process.argv.slice(3), { localWorker: demoWorker() });
else runMain(process.argv.slice(2), { localWorker: demoWorker() });
