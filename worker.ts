/**
 * `npm start`: `durable-agents worker` with this repository's example agents
 * (src/cli/worker-command.ts), on task queue AGENT_TASK_QUEUE (default `agents`).
 */
import { demoWorker } from './scripts/demo-agents/demo-worker';
import { runMain } from './src/cli/main';

runMain(['worker', ...process.argv.slice(2)], { localWorker: demoWorker() });
