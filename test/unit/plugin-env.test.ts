import { randomBytes } from 'node:crypto';
import { AgentsPlugin } from '../../src/worker/agents-plugin';

/** A worker built with Worker.create and the plugin reads the same variables as createAgentWorker and connectTemporal. */

const KEYS = `k1:${randomBytes(32).toString('base64')}`;

function withEnv<T>(vars: Record<string, string>, work: () => T): T {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  Object.assign(process.env, vars);
  try {
    return work();
  } finally {
    for (const [k, v] of Object.entries(saved))
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
  }
}

const codecs = (plugin: AgentsPlugin) =>
  plugin.configureClient({ namespace: 'default' }).dataConverter?.payloadCodecs?.length ?? 0;

it('encrypts with AGENT_ENCRYPTION_KEYS when no keys are given, and not with encryptionKeys: []', () => {
  expect(codecs(new AgentsPlugin({}))).toBe(0);
  expect(withEnv({ AGENT_ENCRYPTION_KEYS: KEYS }, () => codecs(new AgentsPlugin({})))).toBe(1);
  expect(withEnv({ AGENT_ENCRYPTION_KEYS: KEYS }, () => codecs(new AgentsPlugin({ encryptionKeys: [] })))).toBe(0);
});

it('refuses a malformed AGENT_MCP_CONFIG at once, naming it', () => {
  expect(() => withEnv({ AGENT_MCP_CONFIG: '/nonexistent/mcp.json' }, () => new AgentsPlugin({}))).toThrow(/mcp\.json/);
});

it('refuses a named model that is neither a model name nor an AI SDK language model', () => {
  expect(() => new AgentsPlugin({ models: { smart: { id: 'gpt' } as never } })).toThrow(
    /models\.smart must be a model name \("anthropic:claude-sonnet-5"\) or an AI SDK language model/,
  );
  expect(() => new AgentsPlugin({ models: { smart: 'anthropic:claude-x' } })).not.toThrow();
});
