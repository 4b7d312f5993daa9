// Your worker: your workflows, plus the agents the plugin adds next to them.
import { Worker } from '@temporalio/worker';
import { AgentsPlugin, connectTemporal } from 'durable-agents';
import { forecaster, TASK_QUEUE } from './agents';

async function main(): Promise<void> {
  const temporal = await connectTemporal();
  const worker = await Worker.create({
    connection: temporal.nativeConnection,
    namespace: temporal.namespace,
    taskQueue: TASK_QUEUE,
    workflowsPath: require.resolve('./workflows'),
    plugins: [new AgentsPlugin({ agents: [forecaster] })],
  });
  console.log(`worker ready on task queue ${TASK_QUEUE}`);
  await worker.run();
  await temporal.close();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
