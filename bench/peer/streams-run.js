// One streamed answer through @temporalio/workflow-streams with SUBSCRIBERS subscribers; prints
// JSON: history bytes, signals, updates, and each piece's latency (written → first subscriber).
import { Client, Connection } from '@temporalio/client';
import { WorkflowStreamClient } from '@temporalio/workflow-streams/client';
import proto from '@temporalio/proto';
const { temporal } = proto;
import { randomUUID } from 'node:crypto';

const [words, delayMs, subscribers] = process.argv.slice(2).map(Number);
const connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS });
const client = new Client({ connection });
const workflowId = `peer-stream-${randomUUID()}`;
const handle = await client.workflow.start('streamedAnswer', {
  taskQueue: process.env.TASK_QUEUE,
  workflowId,
  args: [words, delayMs],
});
const latencies = [];
const subscribe = async (record) => {
  const stream = WorkflowStreamClient.create(client, workflowId).topic('text');
  let n = 0;
  for await (const item of stream.subscribe(0)) {
    if (record) latencies.push(Date.now() - item.data.sentAt);
    if (++n === words) break;
  }
};
await Promise.all([handle.result(), ...Array.from({ length: subscribers }, (_, i) => subscribe(i === 0))]);
const history = await handle.fetchHistory();
const bytes = temporal.api.history.v1.History.encode(history).finish().length;
const signals = history.events.filter((e) => e.workflowExecutionSignaledEventAttributes).length;
const updates = history.events.filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes).length;
console.log(JSON.stringify({ bytes, signals, updates, latencies }));
await connection.close();
