import type { Client } from '@temporalio/client';
import { expectTypeOf } from 'expect-type';
import { z } from 'zod';
import { defineAgent, runOutcome, startAgentRun, type RunOutcome } from '../../src';
import { executeAgent } from '../../src/workflows/index';
import type { RunStatus } from '../../src/core/state/run-state';

/**
 * Type tests: checked by the compiler (`npm run typecheck`, which CI runs before the tests), so a
 * change that loses a type fails the build. The `@ts-expect-error` lines fail it if they compile.
 */

const Answer = z.object({ orderNumber: z.string(), status: z.enum(['shipped', 'processing']) });
const supportAgent = defineAgent({ name: 'support', instructions: 'Help.', tools: [], output: Answer });
declare const client: Client;

it('types the outcome of a run by the agent or schema it was started with', () => {
  // Only compiled, never run: the client is not real.
  const check = async () => {
    const typed = await runOutcome(
      await startAgentRun(client, supportAgent, 'Where is A-1001?', { taskQueue: 'support' }),
    );
    expectTypeOf(typed.output).toEqualTypeOf<z.infer<typeof Answer> | undefined>();
    expectTypeOf(typed.status).toEqualTypeOf<RunStatus>();
    if (typed.status === 'completed' && typed.output)
      expectTypeOf(typed.output.status).toEqualTypeOf<'shipped' | 'processing'>();

    const bySchema = await runOutcome(
      await startAgentRun(client, { message: 'Where is A-1001?', output: Answer }, { taskQueue: 'support' }),
    );
    expectTypeOf(bySchema).toEqualTypeOf<RunOutcome<z.infer<typeof Answer>>>();

    const byName = await runOutcome(
      await startAgentRun<{ reply: string }>(client, { agent: 'support', message: 'hi' }, { taskQueue: 'support' }),
    );
    expectTypeOf(byName.output).toEqualTypeOf<{ reply: string } | undefined>();

    const plain = await runOutcome(await startAgentRun(client, { message: 'hi' }, { taskQueue: 'support' }));
    expectTypeOf(plain.output).toEqualTypeOf<unknown>();
    // @ts-expect-error status is a union of the statuses, not any string
    expectTypeOf(plain.status).toEqualTypeOf<string>();
    // @ts-expect-error the agent is given by its definition, so the request does not name one
    await startAgentRun(client, supportAgent, { message: 'hi', agent: 'other' }, { taskQueue: 'support' });
  };
  expect(typeof check).toBe('function');
});

it('lets workflow code type an agent child run by the answer it expects', () => {
  const check = async () => {
    const answer = await executeAgent<{ reply: string }>({ agent: 'support', message: 'hi' });
    expectTypeOf(answer.output).toEqualTypeOf<{ reply: string } | undefined>();
    expectTypeOf(answer.status).toEqualTypeOf<RunStatus>();
  };
  expect(typeof check).toBe('function');
});
