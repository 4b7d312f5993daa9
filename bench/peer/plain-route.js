// The plain, non-durable AI SDK route the chat latency bench compares with (bench/chat-latency.ts):
// `streamText` and `toUIMessageStreamResponse` on the same scripted model, with the same tool, as
// the AI SDK's docs write a chat route. Usage: node plain-route.js <port> (OPENAI_BASE_URL set).
import { createServer } from 'node:http';
import { Readable } from 'node:stream';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { convertToModelMessages, stepCountIs, streamText, tool } from 'ai';
import { z } from 'zod';

const provider = createOpenAICompatible({ name: 'bench', baseURL: process.env.OPENAI_BASE_URL, apiKey: 'bench' });
const tools = {
  lookup: tool({
    description: 'Looks a word up',
    inputSchema: z.object({ word: z.string() }),
    execute: async ({ word }) => `${word}: a word`,
  }),
};

const server = createServer(async (req, res) => {
  let body = '';
  for await (const chunk of req) body += chunk;
  const { messages, agent } = JSON.parse(body);
  const result = streamText({
    model: provider.chatModel('bench'),
    system: agent === 'tooler' ? 'Look words up, then answer.' : 'Answer briefly.',
    messages: await convertToModelMessages(messages),
    ...(agent === 'tooler' ? { tools, stopWhen: stepCountIs(5) } : {}),
    abortSignal: AbortSignal.any([]),
  });
  const response = result.toUIMessageStreamResponse();
  res.writeHead(response.status, Object.fromEntries(response.headers));
  Readable.fromWeb(response.body).pipe(res);
});
server.listen(Number(process.argv[2]), '127.0.0.1', () => console.log('plain route ready'));
