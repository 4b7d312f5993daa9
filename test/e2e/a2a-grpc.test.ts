import { once } from 'node:events';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Message, TaskState, type SendMessageRequest, type Task } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions } from '@a2a-js/sdk/client';
import { GrpcTransportFactory } from '@a2a-js/sdk/client/grpc';
import { defineAgent } from '../../src/agents/define-agent';
import { freePort } from '../../src/connection/dev-server';
import { httpApiHandler } from '../../src/http/http-api';
import { listenA2aGrpc } from '../../src/a2a/a2a-grpc';
import { answer, startModel } from '../helpers/scripted-model';
import { createTestWorker, useTestTemporal } from '../helpers/temporal';

/**
 * A2A's gRPC binding, spoken to by the official `@a2a-js/sdk` gRPC client as a client finds it:
 * from the card the HTTP API serves, behind the same tokens (a tenant's token reaches its own
 * tasks only), each agent by its name as the call's tenant.
 */
const temporal = useTestTemporal();

const ADMIN = 'grpc-admin-token-0123456789';
const ACME = 'grpc-acme-token-0123456789';
const OTHER = 'grpc-other-token-0123456789';

const helper = defineAgent({ name: 'helper', description: 'Answers', instructions: 'Answer.', tools: [] });
const second = defineAgent({ name: 'second', description: 'Answers too', instructions: 'Answer.', tools: [] });

function request(text: string, ids: { taskId?: string; contextId?: string } = {}): SendMessageRequest {
  const message = Message.fromJSON({ messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }], ...ids });
  return { tenant: '', message, configuration: undefined, metadata: undefined };
}
const bearer = (token: string) => ({ serviceParameters: { authorization: `Bearer ${token}` } });

it("serves the agents over gRPC from the card: a task answered, read back by its tenant only; refused without a token (the TCK checks the binding's status codes)", async () => {
  const m = await startModel(() => answer('forty-two'));
  const t = temporal();
  const { worker, taskQueue } = await createTestWorker(t, { baseURL: m.baseURL, agents: [helper, second] });
  const grpcPort = await freePort();
  const api = httpApiHandler({
    client: t.client,
    taskQueue,
    access: { tokens: [ADMIN, ACME, OTHER], tenants: { [ACME]: 'acme', [OTHER]: 'other' } },
    a2a: { grpc: { port: grpcPort } },
  });
  const http = createServer(api).listen(0, '127.0.0.1');
  await once(http, 'listening');
  const grpc = await listenA2aGrpc(await api.a2aGrpcService(), '127.0.0.1', grpcPort);
  try {
    await worker.runUntil(async () => {
      const base = `http://localhost:${(http.address() as AddressInfo).port}/a2a/helper`;
      // The card declares gRPC, with the agent's name as its tenant.
      const card = await (await fetch(`${base}/.well-known/agent-card.json`)).json();
      expect(card.supportedInterfaces).toContainEqual({
        url: `localhost:${grpcPort}`,
        protocolBinding: 'GRPC',
        protocolVersion: '1.0',
        tenant: 'helper',
      });
      const factory = new ClientFactory(
        ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
          transports: [new GrpcTransportFactory()],
          preferredTransports: ['GRPC'],
        }),
      );
      const client = await factory.createFromUrl(`${base}/`);
      const task = (await client.sendMessage(request('what is six times seven?'), bearer(ACME))) as Task;
      expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(task.artifacts[0].parts[0].content).toEqual({ $case: 'text', value: 'forty-two' });
      // Its tenant reads it back; another tenant's token finds no such task; an admin's does.
      expect((await client.getTask({ tenant: '', id: task.id, historyLength: undefined }, bearer(ACME))).id).toBe(
        task.id,
      );
      await expect(
        client.getTask({ tenant: '', id: task.id, historyLength: undefined }, bearer(OTHER)),
      ).rejects.toThrow(/not found/i);
      expect((await client.getTask({ tenant: '', id: task.id, historyLength: undefined }, bearer(ADMIN))).id).toBe(
        task.id,
      );
      // The conversation behind it is in the caller's tenant's id space.
      await expect(t.client.workflow.getHandle(`acme:${task.contextId}`).describe()).resolves.toBeDefined();
      // No token, a wrong one: UNAUTHENTICATED (16), saying what to send.
      await expect(client.sendMessage(request('hi'))).rejects.toMatchObject({
        message: expect.stringContaining('authorization: Bearer <token>'),
      });
      await expect(client.sendMessage(request('hi'), bearer('wrong-token-0123456789'))).rejects.toThrow(
        /not one of the server's tokens/,
      );
      // Another agent, by its card (its own tenant); an unknown tenant is no agent.
      const other = await factory.createFromUrl(base.replace('/helper', '/second/'));
      expect(((await other.sendMessage(request('hello'), bearer(ADMIN))) as Task).status?.state).toBe(
        TaskState.TASK_STATE_COMPLETED,
      );
      await expect(client.sendMessage({ ...request('hello'), tenant: 'nobody' }, bearer(ADMIN))).rejects.toThrow(
        /no agent "nobody"/,
      );
    });
  } finally {
    await grpc.close();
    http.closeAllConnections();
    http.close();
    await m.close();
  }
}, 120_000);
