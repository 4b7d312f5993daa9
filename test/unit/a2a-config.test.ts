import { parseA2AAgents } from '../../src/tools/a2a-client/a2a-config';

describe('parseA2AAgents', () => {
  it('reads remote agents by tool name, with ${VAR} references from the environment', () => {
    expect(
      parseA2AAgents(
        {
          research: {
            url: 'https://agents.example.com/a2a/research',
            description: 'Finds things out',
            headers: { authorization: 'Bearer ${RESEARCH_TOKEN}' },
            timeout: '2h',
          },
        },
        'a2a.json',
        { RESEARCH_TOKEN: 's3cret' },
      ),
    ).toEqual([
      {
        name: 'research',
        url: 'https://agents.example.com/a2a/research',
        description: 'Finds things out',
        headers: { authorization: 'Bearer s3cret' },
        timeout: '2h',
      },
    ]);
  });

  it('names every problem at once', () => {
    expect(() =>
      parseA2AAgents(
        { 'bad name': { url: 'ftp://x' }, other: { url: 'https://x/${MISSING}', timeout: 'soon', headers: [] } },
        'a2a.json',
        {},
      ),
    ).toThrow(
      /a2a\.json: a2aAgents\.bad name: tool names.*a2aAgents\.bad name\.url must be an http\(s\) URL.*\$\{MISSING\}, which is not set.*a2aAgents\.other\.headers must be an object.*a2aAgents\.other\.timeout/,
    );
  });
});
