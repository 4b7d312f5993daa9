/**
 * `npm run serve`: `durable-agents serve` with this repository's example agents
 * (src/cli/serve-command.ts): the HTTP API on PORT (8080) with a worker in the same process.
 */
import { demoWorker } from './scripts/demo-agents/demo-worker';
import { runMain } from './src/cli/main';

runMain(['serve', ...process.argv.slice(2)], { localWorker: demoWorker() });
