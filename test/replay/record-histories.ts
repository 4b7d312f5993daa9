/**
 * `npm run record-histories`: runs the replay scenarios against a fresh in-memory dev server and
 * writes their event histories to test/histories. Re-record only on purpose: the replay test
 * exists to catch workflow changes that break runs already in flight.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { connectTemporal } from '../../src/runtime/temporal-env';
import { installRuntimeLogging } from '../../src/runtime/logging';
import { createAgentWorker } from '../../src/runtime/agent-worker';
import { runOutcome, startAgentRun } from '../../src/runtime/run-agent';
import { startScriptedModel } from '../helpers/scripted-model';
import { modelAt } from '../helpers/temporal';
import { testRegistry } from '../helpers/test-tools';
import { scenarios } from './scenarios';

async function main(): Promise<void> {
  installRuntimeLogging('ERROR');
  // Always a fresh in-memory dev server on a free port, even when TEMPORAL_ADDRESS is set.
  const temporal = await connectTemporal({ port: 0, persistent: false }, { ...process.env, TEMPORAL_ADDRESS: '' });
  const { client, nativeConnection } = temporal;
  try {
    for (const scenario of scenarios) {
      const model = await startScriptedModel(scenario.steps);
      const taskQueue = `record-${scenario.name}`;
      const worker = await createAgentWorker({ connection: nativeConnection, client, taskQueue, model: modelAt(model.baseURL), registry: testRegistry(), shutdownGraceTime: '1s' });
      const outcome = await worker.runUntil(async () =>
        runOutcome(await startAgentRun(client, scenario.input, { taskQueue, workflowId: `agent-replay-${scenario.name}` })),
      );
      await model.close();
      const history = await client.workflow.getHandle(outcome.workflowId).fetchHistory();
      writeFileSync(join(__dirname, '..', 'histories', `${scenario.name}.json`), `${historyToJSON(history)}\n`);
      console.log(`${scenario.name}: ${outcome.status}, ${history.events?.length} events`);
    }
  } finally {
    await temporal.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
