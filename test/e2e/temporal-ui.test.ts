import { randomBytes, randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { Client } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { chromium, type Browser } from 'playwright-core';
import { createCodecServer } from '../../src/http/codec-server';
import { EncryptionCodec, encryptingDataConverter, parseEncryptionKeys } from '../../src/codec/encryption-codec';
import { createAgentWorker } from '../../src/worker/create-agent-worker';
import { connectClient } from '../../src/connection/client-connection';
import { freePort, startDevServer, type DevServer } from '../../src/connection/dev-server';
import { runOutcome, startAgentRun } from '../../src/client/run-agent';
import { add } from '../../scripts/demo-agents';
import { answer, call, startModel } from '../helpers/scripted-model';
import { modelAt } from '../helpers/temporal';
import { eventually } from '../helpers/processes';
import { CHROMIUM_PATH, describeInBrowser } from '../helpers/browser';

/**
 * What an operator sees in the Temporal Web UI (a real dev server with its UI, in Debian's
 * Chromium): agents filtered by AgentStatus, and encrypted payloads shown decrypted through the
 * codec server, while the stored history holds only ciphertext.
 */
let browser: Browser;

describeInBrowser('the Temporal Web UI', () => {
  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: ['--no-sandbox'] });
  });
  afterAll(async () => browser?.close());

  it('filters agents by AgentStatus and shows encrypted payloads in plaintext through the codec server', async () => {
    const keys = parseEncryptionKeys(`k1:${randomBytes(32).toString('base64')}`);
    const uiPort = await freePort();
    const uiOrigin = `http://localhost:${uiPort}`;
    const codec = createCodecServer({ codec: new EncryptionCodec(keys), access: { corsOrigins: [uiOrigin] } });
    await new Promise<void>((r) => codec.listen(0, '127.0.0.1', r));
    const codecEndpoint = `http://127.0.0.1:${(codec.address() as AddressInfo).port}`;
    let server: DevServer | undefined;
    const llm = await startModel((req) =>
      req.messages[req.messages.length - 1].role === 'tool' ? answer('UI-ANSWER done') : call(['add', { a: 2, b: 3 }]),
    );
    try {
      server = await startDevServer({ uiPort, uiCodecEndpoint: codecEndpoint }, process.env);
      const connection = await connectClient({ address: server.address });
      const native = await NativeConnection.connect({ address: server.address });
      const client = new Client({ connection: connection.connection, dataConverter: encryptingDataConverter(keys) });
      const taskQueue = `ui-${randomUUID()}`;
      const worker = await createAgentWorker({
        connection: native,
        taskQueue,
        model: modelAt(llm.baseURL),
        registry: [add],
        encryptionKeys: keys,
        workflowBundle: { codePath: process.env.TEST_WORKFLOW_BUNDLE! },
        shutdownGraceTime: '1s',
      });
      await worker.runUntil(async () => {
        const done = await startAgentRun(client, { message: 'UI-DONE add 2 and 3' }, { taskQueue });
        await runOutcome(done);
        const waiting = await startAgentRun(
          client,
          { message: 'UI-WAITING add 2 and 3', approvalTools: ['add'] },
          { taskQueue },
        );
        for (;;) {
          const s = await client.workflow
            .getHandle(waiting.workflowId)
            .query<{ pendingApprovals: unknown[] }>('status');
          if (s.pendingApprovals.length) break;
          await new Promise((r) => setTimeout(r, 100));
        }
        // The UI comes up a moment after the server's gRPC port.
        expect(
          await eventually(
            async () =>
              await fetch(uiOrigin).then(
                (r) => r.ok,
                () => false,
              ),
            30_000,
          ),
        ).toBe(true);
        const page = await browser.newPage();
        try {
          // The list filtered by the search attribute, as typed in the UI's search box.
          const query = encodeURIComponent(`AgentStatus="awaiting_approval"`);
          // Visibility is eventually consistent: reload until the list has indexed the upsert.
          for (let attempt = 1; ; attempt++) {
            await page.goto(`${uiOrigin}/namespaces/default/workflows?query=${query}`);
            const shown = await page
              .getByText(waiting.workflowId)
              .first()
              .waitFor({ timeout: 10_000 })
              .then(
                () => true,
                () => false,
              );
            if (shown) break;
            if (attempt === 3)
              throw new Error(`the UI never listed ${waiting.workflowId} under ${decodeURIComponent(query)}`);
          }
          expect(await page.getByText(done.workflowId).count()).toBe(0);
          // The waiting run's page: its input, decrypted by the codec server in the browser.
          await page.goto(`${uiOrigin}/namespaces/default/workflows/${waiting.workflowId}`);
          await page.getByText('UI-WAITING add 2 and 3').first().waitFor({ timeout: 30_000 });
        } finally {
          await page.close();
        }
        // Meanwhile the server holds only ciphertext.
        expect(
          JSON.stringify(
            await new Client({ connection: connection.connection }).workflow
              .getHandle(waiting.workflowId)
              .fetchHistory(),
          ),
        ).not.toContain('UI-WAITING');
        await client.workflow.getHandle(waiting.workflowId).terminate('test over');
      });
      await connection.close();
      await native.close();
    } finally {
      await server?.stop();
      codec.close();
      codec.closeAllConnections();
      await llm.close();
    }
  }, 120_000);
});
