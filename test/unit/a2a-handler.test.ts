import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import express from 'express';
import type { Client } from '@temporalio/client';
import { a2aHandler } from '../../src/a2a';

/** The A2A handler mounted in a server of one's own: its cards say where the agents are. */
const agents = async () => [{ name: 'calc', description: 'Adds numbers', tools: [], structuredOutput: false }];
const client = {} as Client; // a card is answered without Temporal

async function cardUrl(mount: (app: express.Express) => void, path: string): Promise<unknown> {
  const app = express();
  mount(app);
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  try {
    const { port } = server.address() as AddressInfo;
    const res = await fetch(`http://127.0.0.1:${port}${path}`, { headers: { 'a2a-version': '1.0' } });
    const card = (await res.json()) as { supportedInterfaces?: Array<{ url: string }> };
    return { status: res.status, url: card.supportedInterfaces?.[0]?.url?.replace(/:\d+\//, ':PORT/') };
  } finally {
    server.close();
  }
}

it('names the prefix it is mounted under', async () => {
  expect(
    await cardUrl(
      (app) => app.use('/agents', a2aHandler({ client, taskQueue: 'q', agents })),
      '/agents/a2a/calc/.well-known/agent-card.json',
    ),
  ).toEqual({ status: 200, url: 'http://127.0.0.1:PORT/agents/a2a/calc' });
});

it('gives the public URL behind a proxy, and 404 for an agent the workers do not serve', async () => {
  const mount = (app: express.Express) =>
    app.use(a2aHandler({ client, taskQueue: 'q', agents, publicUrl: 'https://agents.example.com/' }));
  expect(await cardUrl(mount, '/a2a/calc/.well-known/agent-card.json')).toEqual({
    status: 200,
    url: 'https://agents.example.com/a2a/calc',
  });
  expect(await cardUrl(mount, '/a2a/nobody/.well-known/agent-card.json')).toMatchObject({ status: 404 });
});
