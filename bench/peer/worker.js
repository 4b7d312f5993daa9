// The peer's worker, in its own process so its CPU can be measured on its own.
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { AiSdkPlugin } from '@temporalio/ai-sdk';
import { NativeConnection, Runtime, DefaultLogger, Worker } from '@temporalio/worker';
import { fileURLToPath } from 'node:url';
import { WorkflowStreamClient } from '@temporalio/workflow-streams/client';

const OUTPUT_BYTES = Number(process.env.BENCH_OUTPUT_BYTES ?? 2000);
Runtime.install({ logger: new DefaultLogger('ERROR') });

const provider = createOpenAICompatible({ name: 'bench', baseURL: process.env.OPENAI_BASE_URL, apiKey: 'bench' });
const connection = await NativeConnection.connect({ address: process.env.TEMPORAL_ADDRESS });
const worker = await Worker.create({
  connection,
  taskQueue: process.env.TASK_QUEUE,
  workflowsPath: fileURLToPath(new URL('./workflows.js', import.meta.url)),
  activities: {
    fetchDoc: async ({ page }) => `page ${page}: ${'lorem ipsum '.repeat(OUTPUT_BYTES / 12)}`,
    // Publishes `words` pieces, `delayMs` apart, batched every 100 ms (as our model calls batch).
    writeAnswer: async (words, delayMs) => {
      const client = WorkflowStreamClient.fromWithinActivity({ batchInterval: '100 milliseconds' });
      const text = client.topic('text');
      let all = '';
      try {
        for (let i = 0; i < words; i++) {
          await new Promise((r) => setTimeout(r, delayMs));
          const piece = `word${i} `;
          all += piece;
          text.publish({ piece, sentAt: Date.now() });
        }
      } finally {
        await client[Symbol.asyncDispose]();
      }
      return all;
    },
  },
  plugins: [new AiSdkPlugin({ modelProvider: provider })],
});
console.log('peer worker ready');
await worker.run();
