import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { workerSettings } from '../../src/worker/settings';
import { clientSettings } from '../../src/connection/settings';
import { AgentsPlugin } from '../../src/worker/agents-plugin';
import { FileBlobStore } from '../../src/storage/blob-store';
import { CodecBlobStore } from '../../src/storage/codec-blob-store';

/** Settings are read once, from the environment given: nothing below them reads process.env. */

const KEYS = `k1:${randomBytes(32).toString('base64')}`;

describe('workerSettings', () => {
  it('takes remote A2A agents from AGENT_A2A_CONFIG, and the plugin offers them as tools', () => {
    const dir = mkdtempSync(join(tmpdir(), 'settings-'));
    const file = join(dir, 'a2a.json');
    writeFileSync(
      file,
      JSON.stringify({
        a2aAgents: {
          research: { url: 'https://agents.example.com/a2a/research', headers: { authorization: 'Bearer ${T}' } },
        },
      }),
    );
    const env = {
      OPENAI_BASE_URL: 'http://models.internal/v1',
      AGENT_A2A_CONFIG: file,
      T: 'tok',
      AGENT_BLOB_DIR: join(dir, 'b'),
    };
    const s = workerSettings({}, env);
    expect(s.a2aAgents).toEqual([
      { name: 'research', url: 'https://agents.example.com/a2a/research', headers: { authorization: 'Bearer tok' } },
    ]);
    const plugin = new AgentsPlugin({}, s);
    expect(plugin.tools.has('research')).toBe(true);
    expect(plugin.tools.info('research').timeoutMs).toBe(24 * 3600_000);
    expect(() => workerSettings({}, { ...env, T: undefined })).toThrow(
      /a2aAgents\.research\.headers\.authorization uses \$\{T\}, which is not set/,
    );
  });

  it('takes the model, MCP servers, task queue and stores from the environment given', () => {
    const dir = mkdtempSync(join(tmpdir(), 'settings-'));
    const mcp = join(dir, 'mcp.json');
    writeFileSync(mcp, JSON.stringify({ mcpServers: { files: { command: 'files-server', args: ['${ROOT}'] } } }));
    const s = workerSettings(
      {},
      {
        OPENAI_BASE_URL: 'http://models.internal/v1',
        AGENT_MODEL: 'qwen',
        AGENT_MCP_CONFIG: mcp,
        ROOT: '/srv',
        AGENT_TASK_QUEUE: 'support',
        AGENT_BLOB_DIR: join(dir, 'blobs'),
        AGENT_PAYLOAD_STORE: join(dir, 'payloads'),
        AGENT_LOG_LEVEL: 'debug',
      },
    );
    expect(s.model).toMatchObject({ baseURL: 'http://models.internal/v1', model: 'qwen', configured: true });
    expect(s.mcpServers).toEqual({ files: { command: 'files-server', args: ['/srv'] } });
    expect(s.taskQueue).toBe('support');
    expect(s.blobStore).toBeInstanceOf(FileBlobStore);
    expect(s.payloadStorage).toBeDefined();
    expect(s.logging).toEqual({ level: 'DEBUG' });
    expect(s.encryptionKeys).toBeUndefined();
    expect(s.tracing).toBeUndefined();
    expect(s.notes).toEqual([]);
  });

  it('lets the options win over the environment', () => {
    const s = workerSettings(
      {
        model: { baseURL: 'http://mine/v1', apiKey: 'k', model: 'm', requestTimeoutMs: 1000, configured: true },
        models: { smart: 'anthropic:claude-x' },
        prices: { m: { input: 1, output: 2 } },
        mcpServers: {},
        encryptionKeys: [],
        payloadStorage: false,
        tracing: false,
        taskQueue: 'mine',
      },
      {
        AGENT_MODEL: 'theirs',
        AGENT_ENCRYPTION_KEYS: KEYS,
        AGENT_MCP_CONFIG: '/nonexistent.json',
        AGENT_TASK_QUEUE: 'x',
      },
    );
    expect(s.model).toMatchObject({ model: 'm', models: { smart: 'anthropic:claude-x' } });
    expect(s.model.prices?.m).toEqual({ input: 1, output: 2 });
    expect(s.mcpServers).toEqual({});
    expect(s.encryptionKeys).toBeUndefined();
    expect(s.payloadStorage).toBeUndefined();
    expect(s.taskQueue).toBe('mine');
  });

  it('keeps images encrypted with the keys, and says when payloads stay on one machine of a cluster', () => {
    const s = workerSettings({}, { AGENT_ENCRYPTION_KEYS: KEYS, TEMPORAL_ADDRESS: 'temporal.internal:7233' });
    expect(s.encryptionKeys?.map((k) => k.id)).toEqual(['k1']);
    expect(s.allowPlaintext).toBe(false);
    expect(s.blobStore).toBeInstanceOf(CodecBlobStore);
    expect(s.notes).toEqual([expect.stringContaining('set AGENT_PAYLOAD_STORE=s3://bucket/prefix')]);
  });

  it('refuses values it cannot use, naming them', () => {
    expect(() => workerSettings({}, { AGENT_MCP_CONFIG: '/nonexistent/mcp.json' })).toThrow(/mcp\.json/);
    expect(() => workerSettings({}, { AGENT_ENCRYPTION_KEYS: 'nope' })).toThrow(/AGENT_ENCRYPTION_KEYS/);
    expect(() => workerSettings({}, { AGENT_LOG_LEVEL: 'loud' })).toThrow(/AGENT_LOG_LEVEL must be one of/);
    expect(() => workerSettings({ models: { smart: { id: 'gpt' } as never } }, {})).toThrow(/models\.smart/);
  });

  it('is what the plugin is built from', () => {
    const codecs = (plugin: AgentsPlugin) =>
      plugin.configureClient({ namespace: 'default' }).dataConverter?.payloadCodecs?.length ?? 0;
    const encrypted = workerSettings({}, { AGENT_ENCRYPTION_KEYS: KEYS });
    expect(codecs(new AgentsPlugin({}, encrypted))).toBe(1);
    expect(codecs(new AgentsPlugin({}, workerSettings({}, {})))).toBe(0);
  });
});

describe('clientSettings', () => {
  it('gives a client what the workers write with: keys, payload store, their data converter', () => {
    const dir = mkdtempSync(join(tmpdir(), 'settings-'));
    const s = clientSettings({ AGENT_ENCRYPTION_KEYS: KEYS, AGENT_PAYLOAD_STORE: dir, AGENT_TASK_QUEUE: 'support' });
    expect(s.taskQueue).toBe('support');
    expect(s.address).toBeUndefined();
    expect(s.encryptionKeys?.map((k) => k.id)).toEqual(['k1']);
    expect(s.payloadStorage?.where).toBe(`files in ${dir}`);
    expect(s.dataConverter?.payloadCodecs).toHaveLength(1);
    expect(s.dataConverter?.externalStorage).toBe(s.payloadStorage?.storage);
    expect(clientSettings({ AGENT_PAYLOAD_STORE: 'off' }).dataConverter).toBeUndefined();
  });

  it('reads the connection and the dev server settings', () => {
    const s = clientSettings({
      TEMPORAL_ADDRESS: 'temporal.internal:7233',
      TEMPORAL_UI_URL: 'https://ui.internal/',
      AGENT_DEV_SERVER_PORT: '7300',
      TEMPORAL_UI_PORT: '8300',
      AGENT_DEV_SERVER_DB: '/tmp/dev.db',
      AGENT_METRICS_PORT: '9464',
    });
    expect(s).toMatchObject({
      address: 'temporal.internal:7233',
      uiUrl: 'https://ui.internal',
      devServer: { port: 7300, uiPort: 8300, dbFilename: '/tmp/dev.db' },
      logging: { metrics: '0.0.0.0:9464' },
      taskQueue: 'agents',
    });
  });

  it('refuses values it cannot use, naming them', () => {
    expect(() => clientSettings({ AGENT_DEV_SERVER_PORT: 'seventy' })).toThrow(
      'AGENT_DEV_SERVER_PORT must be a port number (0-65535), got "seventy"',
    );
    expect(() => clientSettings({ TEMPORAL_UI_PORT: 'eighty' })).toThrow(/TEMPORAL_UI_PORT must be a port number/);
    expect(() => clientSettings({ AGENT_PAYLOAD_STORE: 'gs://bucket' })).toThrow(/not a store/);
    expect(() => clientSettings({ AGENT_ENCRYPTION_KEYS: 'nope' })).toThrow(/AGENT_ENCRYPTION_KEYS/);
  });
});
