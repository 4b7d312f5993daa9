import { runEval } from '../../src/client/run-eval';
import { answer, lastOf, startModel } from '../helpers/scripted-model';
import { createTestWorker, createTestWorkerInNewNamespace, useTestTemporal } from '../helpers/temporal';

/** runEval against real namespaces: the cases are real runs, tagged with AgentEval where the namespace has it. */
const temporal = useTestTemporal();

const cases = [
  { name: 'capital', input: 'capital of France?', expected: { contains: 'Paris' } },
  { name: 'sum', input: 'one plus one?', expected: { contains: '2' } },
  { name: 'wrong', input: 'capital of Spain?', expected: { contains: 'Madrid' } },
];
const model = () =>
  startModel((req) =>
    answer(/France/.test(lastOf(req, 'user')) ? 'Paris' : /plus/.test(lastOf(req, 'user')) ? '2' : '?'),
  );

describe('runEval', () => {
  it('scores a dataset on a namespace without the AgentEval attribute: the runs go untagged, and it says so once', async () => {
    const t = temporal();
    const scripted = await model();
    // (searchAttributes: false only keeps the worker from printing which agent attributes the namespace lacks.)
    const { worker, taskQueue, namespace, client } = await createTestWorkerInNewNamespace(t, {
      baseURL: scripted.baseURL,
      searchAttributes: false,
    });
    const notes: string[] = [];
    const report = await worker.runUntil(runEval(client, cases, { taskQueue, onNote: (line) => notes.push(line) }));
    expect(report.summary).toMatchObject({ total: 3, passed: 2, failed: 1 });
    expect(report.cases.map((c) => [c.name, c.status, c.pass])).toEqual([
      ['capital', 'completed', true],
      ['sum', 'completed', true],
      ['wrong', 'completed', false],
    ]);
    expect(notes).toEqual([
      `The namespace "${namespace}" has no AgentEval search attribute: the runs go untagged (their workflow ids start with ${report.evalId}). To tag them: temporal operator search-attribute create --namespace ${namespace} --name AgentEval --type Keyword`,
    ]);
  });

  it('tags the runs with AgentEval where the namespace has it', async () => {
    const t = temporal();
    const scripted = await model();
    const { worker, taskQueue } = await createTestWorker(t, { baseURL: scripted.baseURL });
    const notes: string[] = [];
    const report = await worker.runUntil(
      runEval(t.client, cases.slice(0, 1), { taskQueue, onNote: (line) => notes.push(line) }),
    );
    expect(report.summary).toMatchObject({ total: 1, passed: 1 });
    expect(notes).toEqual([]);
    const { searchAttributes } = await t.client.workflow.getHandle(report.cases[0].workflowId).describe();
    expect(searchAttributes.AgentEval).toEqual([report.evalId]);
  });
});
