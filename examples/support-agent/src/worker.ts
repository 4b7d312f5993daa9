// Your own worker, with the agents added by the plugin.
import { Worker } from '@temporalio/worker';
import { AgentsPlugin, connectTemporal } from 'durable-agents';
import { supportAgent, TASK_QUEUE } from './agent';

async function main(): Promise<void> {
  // TEMPORAL_ADDRESS (and the other TEMPORAL_* variables) if set; else a local dev server.
  const temporal = await connectTemporal();
  const worker = await Worker.create({
    connection: temporal.nativeConnection,
    namespace: temporal.namespace,
    taskQueue: TASK_QUEUE,
    // The LLM comes from OPENAI_BASE_URL, OPENAI_API_KEY and AGENT_MODEL.
    plugins: [new AgentsPlugin({ agents: [supportAgent] })],
  });
  console.log(`support worker ready on task queue ${TASK_QUEUE}`);
  await worker.run();
  await temporal.close();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
