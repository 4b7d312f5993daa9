import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { sendMessage } from '../../src/client/conversations';
import { runOutcome, startAgentRun } from '../../src/client/run-agent';
import { ClientError } from '../../src/client/client-error';
import { FileBlobStore } from '../../src/storage/blob-store';
import { defineAgent } from '../../src/agents/define-agent';
import { defineTool } from '../../src/tools/define-tool';
import { ToolRegistry } from '../../src/tools/registry';
import { toolOutput } from '../../src/tools/tool-output';
import type { ChatRequest } from '../../src/testing/chat-request';
import { answer, call, startModel } from '../helpers/scripted-model';
import { createTestWorker, useTestTemporal } from '../helpers/temporal';

/**
 * Images in real runs, through each provider's SDK to the scripted server: a user's image and a
 * tool's reach the model as bytes, while the workflow history holds only their references.
 */
const temporal = useTestTemporal();

const PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const PNG = Buffer.from(PNG_BASE64, 'base64');
const PNG_DATA_URL = `data:image/png;base64,${PNG_BASE64}`;

/** A tool that draws a chart: its result carries an image. */
const chart = defineTool({
  name: 'chart',
  description: 'Draws a chart of the numbers',
  parameters: z.object({ numbers: z.array(z.number()) }),
  execute: async ({ numbers }) => toolOutput({ text: `a chart of ${numbers.length} numbers`, images: [{ data: PNG }] }),
});

/** Every image the model was sent in a request, as URLs, by the role of the message that held it. */
function imagesIn(request: ChatRequest): Array<[string, string]> {
  return request.messages.flatMap((m) => (m.images ?? []).map((url): [string, string] => [m.role, url]));
}

/** A model that charts once when asked, then answers. */
function chartingModel() {
  return startModel((req) =>
    req.messages.some((m) => m.role === 'tool')
      ? answer(`I saw ${imagesIn(req).length} images.`)
      : call(['chart', { numbers: [1, 2, 3] }, 'call_chart']),
  );
}

describe.each([
  ['openai', undefined],
  ['anthropic', 'anthropic:claude-test'],
  ['openai-responses', 'openai-responses:gpt-test'],
] as const)('images through the %s adapter', (provider, modelName) => {
  it('sends the user’s image and the tool’s image to the model, and keeps only references in the history', async () => {
    const blobStore = new FileBlobStore(mkdtempSync(join(tmpdir(), 'blobs-')));
    const model = await chartingModel();
    const baseURL = model.baseURL.replace(/\/v1$/, '');
    const { worker, taskQueue } = await createTestWorker(temporal(), {
      baseURL: model.baseURL,
      registry: new ToolRegistry().register(chart),
      blobStore,
      model: modelName
        ? {
            model: modelName,
            anthropic: { apiKey: 'test-key', baseURL },
          }
        : {},
    });
    const outcome = await worker.runUntil(async () =>
      runOutcome(
        await startAgentRun(
          temporal().client,
          { message: 'Chart 1, 2, 3 and compare with my photo', images: [{ data: PNG, name: 'photo.png' }] },
          { taskQueue, blobStore },
        ),
      ),
    );
    expect(outcome).toMatchObject({ status: 'completed', content: 'I saw 2 images.' });
    expect(outcome.toolExecutions[0]).toMatchObject({ name: 'chart', result: 'a chart of 3 numbers' });
    const [first, second] = model.requests;
    expect(imagesIn(first)).toEqual([['user', PNG_DATA_URL]]);
    // Chat Completions carries a tool's images in a user message after the results; the others in the result.
    expect(imagesIn(second)).toEqual([
      ['user', PNG_DATA_URL],
      [provider === 'openai' ? 'user' : 'tool', PNG_DATA_URL],
    ]);
    const history = JSON.stringify(await temporal().client.workflow.getHandle(outcome.workflowId).fetchHistory());
    expect(history).not.toContain(PNG_BASE64.slice(0, 40));
  });
});

it('keeps a conversation’s image for later turns, and refuses a file the client cannot send before anything starts', async () => {
  const blobStore = new FileBlobStore(mkdtempSync(join(tmpdir(), 'blobs-')));
  const model = await startModel((req) => answer(`turn with ${imagesIn(req).length} image(s)`));
  const { worker, taskQueue } = await createTestWorker(temporal(), { baseURL: model.baseURL, blobStore });
  const id = `images-${Date.now()}`;
  await worker.runUntil(async () => {
    const start = { taskQueue, blobStore };
    const first = await sendMessage(temporal().client, id, { message: 'What is this?', images: [PNG_DATA_URL] }, start);
    expect(first).toMatchObject({ status: 'completed', content: 'turn with 1 image(s)' });
    const second = await sendMessage(temporal().client, id, { message: 'And its colour?' }, start);
    expect(second.content).toBe('turn with 1 image(s)');
    await expect(
      sendMessage(temporal().client, id, { message: 'x', images: [{ data: Buffer.from('%PDF-1.7') }] }, start),
    ).rejects.toThrow(ClientError);
  });
  expect(model.requests).toHaveLength(2);
});

it('fails a run whose model takes no images, saying so, without asking the model', async () => {
  const blobStore = new FileBlobStore(mkdtempSync(join(tmpdir(), 'blobs-')));
  const model = await startModel(() => answer('unreachable'));
  const { worker, taskQueue } = await createTestWorker(temporal(), {
    baseURL: model.baseURL,
    blobStore,
    agents: [defineAgent({ name: 'old', instructions: 'x', tools: [], model: 'gpt-3.5-turbo' })],
  });
  const outcome = await worker.runUntil(async () =>
    runOutcome(
      await startAgentRun(
        temporal().client,
        { agent: 'old', message: 'Describe it', images: [PNG_DATA_URL] },
        { taskQueue, blobStore },
      ),
    ),
  );
  expect(outcome).toMatchObject({ status: 'failed', errorType: 'ModelCall.ImagesUnsupported' });
  expect(outcome.error).toMatch(/gpt-3.5-turbo does not take images/);
  expect(model.requests).toHaveLength(0);
});
