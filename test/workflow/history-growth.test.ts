import { temporal as proto } from '@temporalio/proto';
import { answer, call, startScriptedModel, type ScriptedModel } from '../helpers/scripted-model';
import { runAgent, useTestTemporal } from '../helpers/temporal';
import { testRegistry } from '../helpers/test-tools';

/**
 * The point of the design: the model-call activity gets a reference, not the conversation, so
 * each step adds only its new content to the event history. If the conversation were passed as
 * activity input, step k would record all k earlier tool outputs and growth would be quadratic.
 */
const temporal = useTestTemporal();
let model: ScriptedModel;

const BLOB = 4_000;

async function historyBytes(steps: number): Promise<number> {
  model = await startScriptedModel([], {
    fallback: (req) =>
      req.messages.filter((m) => m.role === 'tool').length < steps ? call(['blob', { n: BLOB }]) : answer('done'),
  });
  const outcome = await runAgent(
    temporal(),
    { message: 'grow', tools: ['blob'], maxIterations: steps + 1 },
    { baseURL: model.baseURL, registry: testRegistry() },
  );
  expect(outcome.toolExecutions).toHaveLength(steps);
  // The client has every output back, read from the history...
  expect(outcome.toolExecutions.every((e) => e.result.length >= BLOB)).toBe(true);
  const handle = temporal().client.workflow.getHandle(outcome.workflowId);
  // ...where the workflow's own result does not repeat them.
  const raw = await handle.result();
  expect(
    raw.toolExecutions.every(
      (e: { result?: string; resultInHistory?: boolean }) => e.result === undefined && e.resultInHistory,
    ),
  ).toBe(true);
  const history = await handle.fetchHistory();
  // Protobuf-encoded size: what Temporal's history size limit counts.
  return proto.api.history.v1.History.encode(history).finish().length;
}

it('grows linearly with the number of steps', async () => {
  const short = await historyBytes(4);
  const long = await historyBytes(16);
  const perStep = (long - short) / 12;
  // A step's output is stored once, as its activity's result, plus ~2.5 KB of events for two
  // activities and their workflow tasks. Constant per step: linear.
  expect(perStep).toBeGreaterThan(BLOB);
  expect(perStep).toBeLessThan(BLOB + 3_000);
  // Had each model call received the conversation, step k would add k outputs: 4x the steps, ~16x the bytes.
  expect(long / short).toBeLessThan(4);
});
