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
  ).toEqual({ status: 200, url: 'http://localhost:PORT/agents/a2a/calc' });
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

it("serves the default agent's card at the root: the only agent, or the one named; several without a name say so", async () => {
  const two = async () => [...(await agents()), { name: 'writer', tools: [], structuredOutput: false }];
  const rootCard = async (options: Partial<Parameters<typeof a2aHandler>[0]>) => {
    const app = express();
    app.use('/agents', a2aHandler({ client, taskQueue: 'q', agents, ...options }));
    const server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const { port } = server.address() as AddressInfo;
      const res = await fetch(`http://127.0.0.1:${port}/agents/.well-known/agent-card.json`, {
        headers: { 'a2a-version': '1.0' },
      });
      const body = (await res.json()) as {
        name?: string;
        error?: string;
        supportedInterfaces?: Array<{ url: string }>;
      };
      return {
        status: res.status,
        name: body.name,
        url: body.supportedInterfaces?.[0]?.url?.replace(/:\d+\//, ':PORT/'),
        error: body.error,
      };
    } finally {
      server.close();
    }
  };
  expect(await rootCard({})).toMatchObject({ status: 200, name: 'calc', url: 'http://localhost:PORT/agents' });
  expect(await rootCard({ agents: two, defaultAgent: 'writer' })).toMatchObject({ status: 200, name: 'writer' });
  expect(await rootCard({ agents: two })).toMatchObject({
    status: 404,
    error: expect.stringMatching(/AGENT_A2A_DEFAULT/),
  });
  expect(await rootCard({ agents: two, defaultAgent: 'nobody' })).toMatchObject({
    status: 404,
    error: expect.stringMatching(/"nobody".*calc, writer/),
  });
});
