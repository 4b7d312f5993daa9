// A script (or your service) asking the agent, and using its structured answer.
import { connectTemporal, runOutcome, startAgentRun } from 'durable-agents';
import { supportAgent, TASK_QUEUE } from './agent';

async function main(question: string): Promise<number> {
  const temporal = await connectTemporal();
  try {
    // Started with the agent's definition, the outcome's `output` has the type of its schema.
    const handle = await startAgentRun(temporal.client, supportAgent, question, { taskQueue: TASK_QUEUE });
    const outcome = await runOutcome(handle);
    const answer = outcome.output;
    if (outcome.status !== 'completed' || !answer) {
      console.error(`the run ended ${outcome.status}: ${outcome.error ?? outcome.content}`);
      return 1;
    }
    console.log(`[${answer.orderNumber}: ${answer.status}] ${answer.reply}`);
    return 0;
  } finally {
    await temporal.close();
  }
}

main(process.argv.slice(2).join(' ') || 'Where is my order A-1001?').then(
  (code) => process.exit(code),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
