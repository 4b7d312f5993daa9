import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadMcpConfig, mcpServersFromEnv, parseMcpServers } from '../../src/tools/mcp-client/mcp-config';
import { mcpResultText } from '../../src/tools/mcp-client/mcp-result';
import { mcpToolName, mcpToolNames } from '../../src/tools/mcp-client/mcp-tool-names';

describe('MCP tool names', () => {
  it('are <server>__<tool>, with characters OpenAI refuses replaced', () => {
    expect(mcpToolName('files', 'read_file')).toBe('files__read_file');
    expect(mcpToolName('gh', 'repos.list/all')).toBe('gh__repos_list_all');
  });

  it('past 64 characters are cut to 57 plus a stable hash, so they stay unique and the same everywhere', () => {
    const long = 'x'.repeat(80);
    const a = mcpToolName('server', `${long}a`);
    const b = mcpToolName('server', `${long}b`);
    expect(a).toHaveLength(64);
    expect(a).toMatch(/^server__x+_[0-9a-f]{6}$/);
    expect(a).not.toBe(b);
    expect(mcpToolName('server', `${long}a`)).toBe(a);
  });

  it('tell apart tools that only replaced characters made alike', () => {
    const names = mcpToolNames('s', ['a.b', 'a_b', 'a/b']);
    expect(names.get('a_b')).toBe('s__a_b');
    expect(new Set(names.values()).size).toBe(3);
    for (const n of names.values()) expect(n).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
  });
});

describe('MCP configuration', () => {
  it('reads the mcpServers format of other MCP clients, expanding ${VAR} from the environment', () => {
    const servers = parseMcpServers(
      {
        files: { command: 'npx', args: ['-y', 'server-files', '${ROOT}'], env: { TOKEN: '${FILES_TOKEN}' } },
        search: {
          url: 'https://search.example/mcp',
          headers: { Authorization: 'Bearer ${SEARCH_KEY}' },
          timeout: '30s',
        },
      },
      'test',
      { ROOT: '/data', FILES_TOKEN: 'f1', SEARCH_KEY: 's3cret' },
    );
    expect(servers).toEqual({
      files: { command: 'npx', args: ['-y', 'server-files', '/data'], env: { TOKEN: 'f1' } },
      search: { url: 'https://search.example/mcp', headers: { Authorization: 'Bearer s3cret' }, timeout: '30s' },
    });
  });

  it('reports every problem at once, naming the server and field', () => {
    expect(() =>
      parseMcpServers(
        {
          'a b': { command: 'x' },
          both: { command: 'x', url: 'http://y' },
          none: {},
          web: { url: 'ftp://x', headers: { A: '${MISSING}' } },
          x__y: { command: 'z' },
        },
        'mcp.json',
        {},
      ),
    ).toThrow(
      'mcp.json: mcpServers.a b: server names are 1-32 letters, digits, "_" or "-", without "__" (they prefix tool names: <server>__<tool>); ' +
        'mcpServers.both: give "command" or "url", not both; mcpServers.none: needs "command" (a stdio server the worker starts) or "url" (a streamable HTTP server); ' +
        'mcpServers.web.url must be an http(s) URL, got "ftp://x"; mcpServers.web.headers.A uses ${MISSING}, which is not set in the environment; ' +
        'mcpServers.x__y: server names are 1-32 letters, digits, "_" or "-", without "__" (they prefix tool names: <server>__<tool>)',
    );
  });

  it('loads AGENT_MCP_CONFIG, and says what is wrong with the file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mcp-config-'));
    const good = join(dir, 'good.json');
    writeFileSync(good, JSON.stringify({ mcpServers: { files: { command: 'files-server' } } }));
    expect(mcpServersFromEnv({ AGENT_MCP_CONFIG: good })).toEqual({ files: { command: 'files-server' } });
    expect(mcpServersFromEnv({})).toEqual({});
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, '{"mcpServers": ');
    expect(() => loadMcpConfig(bad, {})).toThrow(`the MCP configuration ${bad} is not valid JSON`);
    writeFileSync(bad, '{"servers": {}}');
    expect(() => loadMcpConfig(bad, {})).toThrow(`the MCP configuration ${bad} must be an object with "mcpServers"`);
    expect(() => loadMcpConfig(join(dir, 'missing.json'), {})).toThrow(
      `cannot read the MCP configuration ${join(dir, 'missing.json')}`,
    );
  });
});

describe('MCP tool results as the LLM reads them', () => {
  it('joins text and describes images, audio, resources and links', () => {
    const text = mcpResultText({
      content: [
        { type: 'text', text: 'first' },
        { type: 'image', data: Buffer.from('12345').toString('base64'), mimeType: 'image/png' },
        { type: 'audio', data: Buffer.from('1234').toString('base64'), mimeType: 'audio/wav' },
        { type: 'resource', resource: { uri: 'file:///a.txt', mimeType: 'text/plain', text: 'inside' } },
        { type: 'resource', resource: { uri: 'file:///b.bin', blob: Buffer.from('12').toString('base64') } },
        { type: 'resource_link', uri: 'file:///c', name: 'c', description: 'the c file' },
      ],
    });
    expect(text).toBe(
      'first\n[image: image/png, 5 bytes]\n[audio: audio/wav, 4 bytes]\n[resource file:///a.txt (text/plain)]\ninside\n[resource file:///b.bin: binary, 2 bytes]\n[resource link: c <file:///c> - the c file]',
    );
  });

  it('gives structured content as JSON when there is no other content', () => {
    expect(mcpResultText({ content: [], structuredContent: { temperature: 21 } })).toBe('{"temperature":21}');
  });
});
