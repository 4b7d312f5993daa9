import { agentVersion, canonicalJson } from '../../src/core/run/agent-version';

/** An agent's version: stable for the same definition, different for any change that matters. */
const definition = {
  settings: { name: 'support', instructions: 'Be brief.', modelSettings: { model: 'm1', temperature: 0 } },
  tools: [{ name: 'lookup', immediate: false }],
  specs: [
    { name: 'lookup', description: 'Looks up', parameters: { type: 'object', properties: { id: { type: 'string' } } } },
  ],
};

it('is the same for the same definition, whatever the order of its keys', () => {
  const reordered = {
    specs: [
      {
        parameters: { properties: { id: { type: 'string' } }, type: 'object' },
        description: 'Looks up',
        name: 'lookup',
      },
    ],
    tools: [{ immediate: false, name: 'lookup' }],
    settings: { modelSettings: { temperature: 0, model: 'm1' }, instructions: 'Be brief.', name: 'support' },
  };
  expect(agentVersion(reordered)).toBe(agentVersion(definition));
  expect(agentVersion(definition)).toMatch(/^av-[0-9a-f]{16}$/);
  expect(canonicalJson({ b: 1, a: { d: undefined, c: [2, 1] } })).toBe('{"a":{"c":[2,1]},"b":1}');
});

it('changes with a word of the instructions, the model, or a tool’s schema', () => {
  const base = agentVersion(definition);
  const changed = [
    { ...definition, settings: { ...definition.settings, instructions: 'Be briefer.' } },
    { ...definition, settings: { ...definition.settings, modelSettings: { model: 'm2', temperature: 0 } } },
    {
      ...definition,
      specs: [{ ...definition.specs[0], parameters: { type: 'object', properties: { id: { type: 'number' } } } }],
    },
  ].map(agentVersion);
  expect(new Set([base, ...changed]).size).toBe(4);
});
