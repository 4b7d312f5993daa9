/**
 * Command-line client of this repository: the published `durable-agents` command, with the example
 * agents as its local worker, so it works on its own here (a worker in its own process while the
 * dev server is embedded). `node --import tsx client.ts --help` lists the commands.
 */
import { demoWorker } from './scripts/demo-agents/demo-worker';
import { runMain } from './src/cli/main';

runMain(process.argv.slice(2), { localWorker: demoWorker() });
