/**
 * `npm run demo`: the calculator question from the Quarkus LangChain4j document, end to end on a
 * durable workflow. Uses the configured LLM, or the bundled offline model when none is set.
 */
import { randomBytes } from 'node:crypto';
import type { ModelConfig } from '../src/activities';
import { workerSettings } from '../src/worker/settings';
import { clientSettings } from '../src/connection/settings';
import { outcomeText } from '../src/cli/format-outcome';
import { runFromCommandLine } from '../src/cli/run-flow';
import { demoWorker } from './demo-agents/demo-worker';
import { installRuntimeLogging } from '../src/telemetry/logging';
import { demoModel } from '../src/testing/demo-model';
import { startOpenAICompatibleServer, type OpenAICompatibleServer } from '../src/testing/openai-compatible-server';
import { exitWhenFlushed } from '../src/cli/exit';

const DEMO_QUESTION = 'What is the square root of the sum of the numbers of letters in the words "hello" and "world"?';

async function main(): Promise<number> {
  const settings = clientSettings();
  installRuntimeLogging('ERROR', settings.logging);
  let offline: OpenAICompatibleServer | undefined;
  let model: ModelConfig = workerSettings().model;
  if (!model.configured) {
    // AGENT_DEMO_MODEL_PORT: where the offline model listens (default: any free port).
    const given = process.env.AGENT_DEMO_MODEL_PORT;
    const port = given ? Number(given) : undefined;
    if (port !== undefined && !(Number.isInteger(port) && port > 0 && port < 65536))
      throw new Error(`AGENT_DEMO_MODEL_PORT must be a port number (1-65535), got "${given}"`);
    offline = await startOpenAICompatibleServer(demoModel, port ? { port } : {});
    model = { ...model, baseURL: offline.baseURL, apiKey: 'offline', model: 'offline-demo', configured: true };
    console.log(
      `No OPENAI_API_KEY or OPENAI_BASE_URL set: using the bundled offline scripted model (not a real LLM) at ${offline.baseURL}.`,
    );
  } else {
    console.log(`Model: ${model.model} at ${model.baseURL}`);
  }
  try {
    console.log(`Question: ${DEMO_QUESTION}\n`);
    // A private task queue: this demo's worker (and its model) answers only this demo's run, on
    // the embedded dev server or on the server TEMPORAL_ADDRESS names.
    const r = await runFromCommandLine({
      input: { message: DEMO_QUESTION },
      taskQueue: `demo-${randomBytes(3).toString('hex')}`,
      settings,
      localWorker: { ...demoWorker(), model, onAnyServer: true },
      note: (line) => console.log(line),
    });
    if (!('outcome' in r)) {
      console.log(r.followUp);
      return 130;
    }
    console.log(`\n${outcomeText(r.outcome, r.uiLink)}`);
    return r.outcome.status === 'failed' ? 1 : 0;
  } finally {
    await offline?.close();
  }
}

main().then(
  (code) => exitWhenFlushed(code),
  (err) => {
    console.error(`demo: ${err instanceof Error ? err.message : String(err)}`);
    exitWhenFlushed(1);
  },
);
