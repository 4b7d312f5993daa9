/**
 * The floor's worker (see workflows.ts), with the SDK's defaults, in its own process as the
 * others are.
 */
import { NativeConnection, Worker } from '@temporalio/worker';
import { installRuntimeLogging } from '../../src/telemetry/logging';
import * as activities from './activities';

async function main(): Promise<void> {
  installRuntimeLogging('ERROR');
  const connection = await NativeConnection.connect({ address: process.env.TEMPORAL_ADDRESS! });
  const worker = await Worker.create({
    connection,
    taskQueue: process.env.TASK_QUEUE!,
    workflowsPath: require.resolve('./workflows'),
    activities,
  });
  console.log('floor worker ready');
  await worker.run();
  await connection.close();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
