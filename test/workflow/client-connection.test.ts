import { connectClient } from '../../src/connection/client-connection';
import { startDevServer } from '../../src/connection/dev-server';

/**
 * Closing a connection while a call is between retries (the server went away) must not crash the
 * process: the SDK's retry timer fires after the close, and without the guard grpc-js throws
 * "Channel has been shut down" from inside that timer. (With a plain `Connection.connect` this
 * test fails on that uncaught exception.)
 */
it('ends a call that is retrying when the connection closes as a rejected call, not an uncaught exception', async () => {
  const uncaught: unknown[] = [];
  const record = (err: unknown) => uncaught.push(err);
  process.on('uncaughtException', record);
  const server = await startDevServer({}, process.env);
  const guarded = await connectClient({ address: server.address });
  try {
    await server.stop(); // every call now fails with UNAVAILABLE, which the SDK retries after a delay
    const call = guarded.connection.workflowService.describeNamespace({ namespace: 'default' });
    const outcome = call.then(
      () => 'resolved',
      (err: { code?: number }) => err.code,
    );
    await new Promise((r) => setTimeout(r, 400)); // the first attempts have failed; a retry is scheduled
    await guarded.close();
    expect(await outcome).toBe(1); // CANCELLED
    // A call made after the close ends the same way (it used to throw a TypeError inside a timer).
    const late = await guarded.connection.workflowService.describeNamespace({ namespace: 'default' }).then(
      () => 'resolved',
      (err: { code?: number }) => err.code,
    );
    expect(late).toBe(1);
    await new Promise((r) => setTimeout(r, 3_000)); // past the SDK's longest early retry delay
    expect(uncaught).toEqual([]);
  } finally {
    process.off('uncaughtException', record);
  }
});
