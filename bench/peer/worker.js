// The peer's worker, in its own process so its CPU can be measured on its own.
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { AiSdkPlugin } from '@temporalio/ai-sdk';
import { NativeConnection, Runtime, DefaultLogger, Worker } from '@temporalio/worker';
import { fileURLToPath } from 'node:url';

const OUTPUT_BYTES = Number(process.env.BENCH_OUTPUT_BYTES ?? 2000);
Runtime.install({ logger: new DefaultLogger('ERROR') });

const provider = createOpenAICompatible({ name: 'bench', baseURL: process.env.OPENAI_BASE_URL, apiKey: 'bench' });
const connection = await NativeConnection.connect({ address: process.env.TEMPORAL_ADDRESS });
const worker = await Worker.create({
  connection,
  taskQueue: process.env.TASK_QUEUE,
  workflowsPath: fileURLToPath(new URL('./workflows.js', import.meta.url)),
  activities: { fetchDoc: async ({ page }) => `page ${page}: ${'lorem ipsum '.repeat(OUTPUT_BYTES / 12)}` },
  plugins: [new AiSdkPlugin({ modelProvider: provider })],
});
console.log('peer worker ready');
await worker.run();
