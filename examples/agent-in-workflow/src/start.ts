// Starts your workflow and prints what it decided.
import { connectTemporal } from 'durable-agents';
import { TASK_QUEUE } from './agents';
import type { planTrip } from './workflows';

async function main(city: string): Promise<void> {
  const temporal = await connectTemporal();
  try {
    const plan = await temporal.client.workflow.execute<typeof planTrip>('planTrip', {
      taskQueue: TASK_QUEUE,
      workflowId: `plan-trip-${city.toLowerCase().replace(/\W+/g, '-')}-${Date.now()}`,
      args: [city],
    });
    console.log(plan);
  } finally {
    await temporal.close();
  }
}

main(process.argv[2] ?? 'Beijing').catch((err) => {
  console.error(err);
  process.exit(1);
});
