import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { queueMessage, startMessage } from '../../src/client/conversations';
import { startAgentRun } from '../../src/client/run-agent';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ModelCallError } from '../../src/models/model-error';
import { imagesProblem } from '../../src/core/messages/images';
import { validateAgentInput } from '../../src/core/run/run-input';
import type { ChatMessage, ImageRef } from '../../src/core/messages/chat-message';
import { startRun } from '../../src/core/run/agent-loop';
import { createHash } from 'node:crypto';
import { EncryptionCodec } from '../../src/codec/encryption-codec';
import { BlobNotFoundError, blobRef, FileBlobStore } from '../../src/storage/blob-store';
import { CodecBlobStore } from '../../src/storage/codec-blob-store';
import { readImageArgument, sniffImageType, storeImages } from '../../src/storage/images';
import { acceptsImages, imageRefusalHint, withImageUrls } from '../../src/models/image-support';
import { toAnthropicPrompt } from '../../src/models/anthropic/messages-format';
import { toResponsesInput } from '../../src/models/openai/responses-format';
import { toAiSdkPrompt } from '../../src/models/ai-sdk/ai-sdk-format';
import { userMessage, withToolImages } from '../../src/models/openai/chat-images';
import { toFunctionsMessages } from '../../src/models/openai/legacy-functions';
import { reactMessages } from '../../src/models/openai/react-prompt';
import { toolOutcomeOf } from '../../src/tools/tool-call';
import { toolOutput } from '../../src/tools/tool-output';
import { mcpToolOutput } from '../../src/tools/mcp-client/mcp-result';

/** Images by reference: what inputs may hold, the blob store, and each adapter's wire format. */

const PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const PNG = Buffer.from(PNG_BASE64, 'base64');
const PNG_DATA_URL = `data:image/png;base64,${PNG_BASE64}`;
const store = () => new FileBlobStore(mkdtempSync(join(tmpdir(), 'blobs-')));

describe('image references in inputs', () => {
  const blob: ImageRef = { blob: blobRef(PNG), mediaType: 'image/png', bytes: PNG.length };

  it('accepts http(s) URLs and blobs with a media type', () => {
    expect(imagesProblem([{ url: 'https://example.com/a.png' }, blob])).toBeUndefined();
    expect(validateAgentInput({ message: 'hi', images: [blob] })).toEqual([]);
  });

  it('refuses data URLs (bytes in the history), bad URLs, bad blobs and unknown types, saying what to do', () => {
    expect(imagesProblem([{ url: PNG_DATA_URL }])).toMatch(/data URL carries the bytes.*pass it to the client/);
    expect(imagesProblem([{ url: 'ftp://x/a.png' }])).toMatch(/http\(s\) URL/);
    expect(imagesProblem([{ blob: 'sha256:abc', mediaType: 'image/png' }])).toMatch(/64 hex digits/);
    expect(imagesProblem([{ blob: blob.blob }])).toMatch(/needs its "mediaType"/);
    expect(imagesProblem([{ ...blob, mediaType: 'image/svg+xml' }])).toMatch(/one of image\/png/);
    expect(imagesProblem([{ url: 'https://a/b', blob: blob.blob, mediaType: 'image/png' }])).toMatch(/not both/);
    expect(imagesProblem('https://a/b')).toMatch(/must be an array/);
    expect(imagesProblem(Array.from({ length: 21 }, () => blob))).toMatch(/at most 20/);
  });

  it('puts a run’s images on its user message, and only when there are some', () => {
    expect(startRun({ message: 'look', images: [blob] }, []).messages).toEqual([
      { role: 'user', content: 'look', images: [blob] },
    ]);
    expect(startRun({ message: 'look' }, []).messages[0]).toEqual({ role: 'user', content: 'look' });
  });
});

describe('the file blob store', () => {
  it('stores bytes under their hash once, and reads them back', async () => {
    const s = store();
    const ref = await s.put(PNG);
    expect(ref).toBe(`sha256:${createHash('sha256').update(PNG).digest('hex')}`);
    expect(await s.put(PNG)).toBe(ref);
    expect(Buffer.from(await s.get(ref)).equals(PNG)).toBe(true);
    const dir = join(s.location, 'sha256', ref.slice(7, 9));
    expect(readdirSync(dir)).toEqual([ref.slice(7)]);
  });

  it('names the shared-store fix for a blob it does not hold, and refuses damaged ones', async () => {
    const s = store();
    const missing = blobRef(Buffer.from('elsewhere'));
    await expect(s.get(missing)).rejects.toThrow(BlobNotFoundError);
    await expect(s.get(missing)).rejects.toThrow(/AGENT_BLOB_DIR/);
    const ref = await s.put(PNG);
    writeFileSync(join(s.location, 'sha256', ref.slice(7, 9), ref.slice(7)), 'tampered');
    await expect(s.get(ref)).rejects.toThrow(/damaged/);
    await expect(s.get('../../etc/passwd')).rejects.toThrow(/not a blob reference/);
  });
});

describe('storing images as clients take them', () => {
  it('stores bytes and data URLs (type read from the bytes), and passes URLs through', async () => {
    const s = store();
    const refs = await storeImages([{ data: PNG, name: 'dot.png' }, PNG_DATA_URL, 'https://example.com/cat.jpg'], s);
    expect(refs).toEqual([
      { blob: blobRef(PNG), mediaType: 'image/png', bytes: PNG.length, name: 'dot.png' },
      { blob: blobRef(PNG), mediaType: 'image/png', bytes: PNG.length },
      { url: 'https://example.com/cat.jpg' },
    ]);
    expect(await storeImages([], s)).toBeUndefined();
  });

  it('refuses what no model takes, with the reason', async () => {
    const s = store();
    await expect(storeImages([{ data: Buffer.from('not an image') }], s)).rejects.toThrow(
      /not an image of a known type; models take image\/png/,
    );
    await expect(storeImages(['data:image/png,abc'], s)).rejects.toThrow(/without ";base64"/);
    await expect(storeImages(['/tmp/cat.png'], s)).rejects.toThrow(/neither an http\(s\) URL nor a data URL/);
    await expect(storeImages([{ data: Buffer.alloc(21 * 1024 * 1024, 0xff) }], s)).rejects.toThrow(/at most 20 MB/);
    await expect(storeImages([{ data: Buffer.from('<svg/>'), mediaType: 'image/svg+xml' }], s)).rejects.toThrow(
      /of type image\/svg\+xml/,
    );
    // The bytes decide: a PNG said to be a JPEG is stored as the PNG it is.
    expect(await storeImages([{ data: PNG, mediaType: 'image/jpeg' }], s)).toEqual([
      expect.objectContaining({ mediaType: 'image/png' }),
    ]);
  });

  it('reads the types of common image formats from their first bytes', () => {
    expect(sniffImageType(PNG)).toBe('image/png');
    expect(sniffImageType(Buffer.from([0xff, 0xd8, 0xff, 0xe0]))).toBe('image/jpeg');
    expect(sniffImageType(Buffer.from('GIF89a'))).toBe('image/gif');
    expect(sniffImageType(Buffer.from('RIFF\0\0\0\0WEBPVP8 '))).toBe('image/webp');
    expect(sniffImageType(Buffer.from('%PDF-1.7'))).toBeUndefined();
  });

  it('reads --image files and names a missing one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'img-'));
    writeFileSync(join(dir, 'dot.png'), PNG);
    expect(await readImageArgument(join(dir, 'dot.png'))).toEqual({ data: PNG, name: 'dot.png' });
    expect(await readImageArgument('https://x/y.png')).toBe('https://x/y.png');
    await expect(readImageArgument(join(dir, 'nope.png'))).rejects.toThrow(/--image .*nope.png: no such file/);
  });
});

describe('images on their way to a model', () => {
  it('inlines blobs as data URLs and leaves URLs as they are', async () => {
    const s = store();
    const [ref] = (await storeImages([{ data: PNG }], s))!;
    const sent = await withImageUrls(
      [{ role: 'user', content: 'what is this?', images: [ref, { url: 'https://x/y.png' }] }],
      'gpt-4.1',
      s,
    );
    expect(sent[0]).toMatchObject({ images: [{ url: PNG_DATA_URL }, { url: 'https://x/y.png' }] });
  });

  it('fails a user’s images on a text-only model, and leaves a tool’s out with a note', async () => {
    const s = store();
    const [ref] = (await storeImages([{ data: PNG }], s))!;
    const user: ChatMessage = { role: 'user', content: 'look', images: [ref] };
    const err = await withImageUrls([user], 'openai:gpt-3.5-turbo', s).catch((e) => e);
    expect(err).toBeInstanceOf(ModelCallError);
    expect(err).toMatchObject({ kind: 'images_unsupported', type: 'ModelCall.ImagesUnsupported', retryable: false });
    expect(err.message).toMatch(/does not take images.*use a model that does/);
    const tool: ChatMessage = { role: 'tool', tool_call_id: 'c1', content: 'chart drawn', images: [ref] };
    const [sent] = await withImageUrls([tool], 'deepseek-chat', s);
    expect(sent).toEqual({ role: 'tool', tool_call_id: 'c1', content: expect.stringMatching(/1 image\(s\) left out/) });
    expect(acceptsImages('anthropic:claude-sonnet-4-5')).toBe(true);
    expect(acceptsImages('o3-mini')).toBe(false);
  });

  it('fails a blob the worker cannot find, naming the shared store, without retries', async () => {
    const ref: ImageRef = { blob: blobRef(Buffer.from('x')), mediaType: 'image/png' };
    const err = await withImageUrls([{ role: 'user', content: 'x', images: [ref] }], 'gpt-4.1', store()).catch(
      (e) => e,
    );
    expect(err).toMatchObject({ type: 'ModelCall.ImageNotFound', retryable: false });
    expect(err.message).toMatch(/clients and workers must share one store/);
  });

  it('adds the likely reason to a 400 on a request with images', () => {
    const bad = new ModelCallError('bad_request', 'invalid content type');
    const withImages: ChatMessage[] = [{ role: 'user', content: 'x', images: [{ url: 'https://x/y.png' }] }];
    expect((imageRefusalHint(bad, withImages, 'llama3') as Error).message).toMatch(/does llama3 take images/);
    expect(imageRefusalHint(bad, [{ role: 'user', content: 'x' }], 'llama3')).toBe(bad);
  });
});

describe('each wire format', () => {
  const image = { url: PNG_DATA_URL, mediaType: 'image/png' };
  const remote = { url: 'https://example.com/cat.jpg' };
  const call = { id: 'c1', type: 'function' as const, function: { name: 'draw', arguments: '{}' } };
  const conversation: ChatMessage[] = [
    { role: 'user', content: 'Compare these', images: [image, remote] },
    { role: 'assistant', content: null, tool_calls: [call, { ...call, id: 'c2' }] },
    { role: 'tool', tool_call_id: 'c1', content: 'drawn', images: [image] },
    { role: 'tool', tool_call_id: 'c2', content: 'no picture' },
  ];

  it('Chat Completions: image_url parts; tool images in a user message after the step’s results', () => {
    expect(userMessage(conversation[0] as Extract<ChatMessage, { role: 'user' }>)).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'Compare these' },
        { type: 'image_url', image_url: { url: PNG_DATA_URL } },
        { type: 'image_url', image_url: { url: remote.url } },
      ],
    });
    const wire = toFunctionsMessages(conversation);
    expect(wire.map((m) => m.role)).toEqual(['user', 'assistant', 'function', 'function', 'user']);
    const wired = withToolImages(
      conversation,
      conversation.map((m) => ({ ...m }) as never),
    );
    expect(wired.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'tool', 'user']);
    expect(wired[4].content).toEqual([
      { type: 'text', text: 'Images the tools returned:' },
      { type: 'text', text: 'Tool call c1:' },
      { type: 'image_url', image_url: { url: PNG_DATA_URL } },
    ]);
    // ReAct: the question's images and its tools' go with the prompt.
    const react = reactMessages(conversation, [], false);
    expect(react[react.length - 1].content).toEqual([
      expect.objectContaining({ type: 'text' }),
      { type: 'image_url', image_url: { url: PNG_DATA_URL } },
      { type: 'image_url', image_url: { url: remote.url } },
      { type: 'image_url', image_url: { url: PNG_DATA_URL } },
    ]);
  });

  it('Anthropic: base64 and URL image blocks before the text, and images inside tool_result', () => {
    const { messages } = toAnthropicPrompt(conversation, []);
    expect(messages[0].content).toEqual([
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG_BASE64 } },
      { type: 'image', source: { type: 'url', url: remote.url } },
      { type: 'text', text: 'Compare these' },
    ]);
    expect(messages[2].content).toEqual([
      {
        type: 'tool_result',
        tool_use_id: 'c1',
        content: [
          { type: 'text', text: 'drawn' },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG_BASE64 } },
        ],
      },
      expect.objectContaining({ type: 'tool_result', tool_use_id: 'c2', content: 'no picture' }),
    ]);
  });

  it('Responses API: input_image parts, and images in function_call_output', () => {
    const { input } = toResponsesInput(conversation);
    expect(input[0]).toEqual({
      role: 'user',
      content: [
        { type: 'input_text', text: 'Compare these' },
        { type: 'input_image', image_url: PNG_DATA_URL, detail: 'auto' },
        { type: 'input_image', image_url: remote.url, detail: 'auto' },
      ],
    });
    expect(input[3]).toEqual({
      type: 'function_call_output',
      call_id: 'c1',
      output: [
        { type: 'input_text', text: 'drawn' },
        { type: 'input_image', image_url: PNG_DATA_URL, detail: 'auto' },
      ],
    });
  });

  it('AI SDK: file parts and tool-result content in the shape of each specification version', () => {
    const v4 = toAiSdkPrompt(conversation, 'v4');
    expect(v4[0].content).toEqual([
      { type: 'text', text: 'Compare these' },
      { type: 'file', data: { type: 'data', data: PNG_BASE64 }, mediaType: 'image/png' },
      { type: 'file', data: { type: 'url', url: new URL(remote.url) }, mediaType: 'image' },
    ]);
    const tool = (prompt: ReturnType<typeof toAiSdkPrompt>) =>
      (prompt[2].content as Array<{ output: unknown }>)[0].output;
    expect(tool(v4)).toEqual({
      type: 'content',
      value: [
        { type: 'text', text: 'drawn' },
        { type: 'file', data: { type: 'data', data: PNG_BASE64 }, mediaType: 'image/png' },
      ],
    });
    const v3 = toAiSdkPrompt(conversation, 'v3');
    expect(v3[0].content[1]).toEqual({ type: 'file', data: PNG_BASE64, mediaType: 'image/png' });
    expect(tool(v3)).toMatchObject({ value: [{}, { type: 'image-data', data: PNG_BASE64, mediaType: 'image/png' }] });
    expect(tool(toAiSdkPrompt(conversation, 'v2'))).toMatchObject({
      value: [{}, { type: 'media', data: PNG_BASE64, mediaType: 'image/png' }],
    });
  });

  it('refuses a blob reference outside the model-call activity, saying what to pass instead', () => {
    const blobbed: ChatMessage[] = [
      { role: 'user', content: 'x', images: [{ blob: blobRef(PNG), mediaType: 'image/png' }] },
    ];
    expect(() => toResponsesInput(blobbed)).toThrow(/give the image as an http\(s\) or data: URL/);
  });
});

describe('images tools return', () => {
  it('stores a toolOutput’s images and keeps only references; leaves out what cannot be sent, with a note', async () => {
    const s = store();
    const outcome = await toolOutcomeOf(
      toolOutput({
        text: 'Here is the chart',
        value: { points: 3 },
        images: [{ data: PNG }, { data: Buffer.from('<svg/>'), mediaType: 'image/svg+xml' }],
      }),
      s,
    );
    expect(outcome).toEqual({
      result: expect.stringMatching(/^Here is the chart\n\[an image was left out: .*image\/svg\+xml/),
      value: { points: 3 },
      error: false,
      images: [{ blob: blobRef(PNG), mediaType: 'image/png', bytes: PNG.length }],
    });
    expect(JSON.stringify(outcome)).not.toContain(PNG_BASE64);
  });

  it('inlines a toolOutput’s images without a store (the low-level API)', async () => {
    const outcome = await toolOutcomeOf(toolOutput({ text: 'chart', images: [{ data: PNG_BASE64 }] }));
    expect(outcome.images).toEqual([{ url: PNG_DATA_URL, mediaType: 'image/png', bytes: PNG.length }]);
  });

  it('passes an MCP result’s image content on, with its text', () => {
    const output = mcpToolOutput({
      content: [
        { type: 'text', text: 'Screenshot:' },
        { type: 'image', data: PNG_BASE64, mimeType: 'image/png' },
      ],
    });
    expect(output).toMatchObject({
      text: 'Screenshot:\n[image: image/png, 70 bytes]',
      images: [{ data: PNG_BASE64, mediaType: 'image/png' }],
    });
    expect(mcpToolOutput({ content: [{ type: 'text', text: 'plain' }] })).toBe('plain');
  });
});

describe('blobs through payload codecs', () => {
  const key = (id: string, fill: number) => ({ id, key: Buffer.alloc(32, fill) });

  it('keeps an image encrypted at rest and reads it back with the keys, not without them', async () => {
    const files = store();
    const encrypted = new CodecBlobStore(files, [new EncryptionCodec([key('k1', 1)])]);
    const ref = await encrypted.put(PNG);
    const atRest = Buffer.from(await files.get(ref));
    expect(atRest.includes(PNG.subarray(0, 16))).toBe(false);
    expect(Buffer.from(await encrypted.get(ref)).equals(PNG)).toBe(true);
    // After a key rotation the old key still decrypts; a store without it cannot.
    const rotated = new CodecBlobStore(files, [new EncryptionCodec([key('k2', 2), key('k1', 1)])]);
    expect(Buffer.from(await rotated.get(ref)).equals(PNG)).toBe(true);
    await expect(new CodecBlobStore(files, [new EncryptionCodec([key('k2', 2)])]).get(ref)).rejects.toThrow(
      /encrypted with key "k1"/,
    );
  });

  it('reads a blob stored without codecs (a client from before encryption)', async () => {
    const files = store();
    const ref = await files.put(PNG);
    const encrypted = new CodecBlobStore(files, [new EncryptionCodec([key('k1', 1)])]);
    expect(Buffer.from(await encrypted.get(ref)).equals(PNG)).toBe(true);
  });
});

it('stores no image of a message or run it refuses: it is checked before its images are stored', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'refused-images-'));
  const blobStore = new FileBlobStore(dir);
  const png = `data:image/png;base64,${Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]).toString('base64')}`;
  // Refused locally: no request reaches Temporal, so no client is needed.
  const client = {} as never;
  await expect(
    startMessage(
      client,
      'chat-1',
      { message: 'hi', images: [png] },
      { taskQueue: 'q', blobStore, options: { agent: 'no such/agent' } },
    ),
  ).rejects.toMatchObject({ kind: 'invalid' });
  await expect(
    queueMessage(client, 'chat-1', { message: ' ', images: [png] }, { taskQueue: 'q', blobStore }),
  ).rejects.toMatchObject({ kind: 'invalid' });
  await expect(
    startAgentRun(client, { message: 'hi', images: [png], maxIterations: 0 }, { taskQueue: 'q', blobStore }),
  ).rejects.toMatchObject({ kind: 'invalid' });
  expect(readdirSync(dir)).toEqual([]);
});
