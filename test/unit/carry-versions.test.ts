import {
  CARRY_VERSIONS,
  carriedIn,
  readCarry,
  type CarryKind,
  type CarryVersion,
} from '../../src/core/state/carry-versions';

/** A registry at version 3 of `run`, whose two upgrades rename a field and then add one. */
const registry: Record<CarryKind, CarryVersion> = {
  ...CARRY_VERSIONS,
  run: {
    current: 3,
    upgrades: [
      {
        from: 1,
        since: '0.3.0',
        why: 'turns became steps',
        upgrade: ({ turns, ...rest }) => ({ ...rest, steps: turns }),
      },
      { from: 2, since: '0.4.0', why: 'a budget left', upgrade: (c) => ({ ...c, left: 10 - (c.steps as number) }) },
    ],
  },
};

describe('carried state versions', () => {
  it('reads a carry that names no version as version 1, the shape before versions', () => {
    expect(readCarry('run', { turns: 4 }, undefined, registry)).toEqual({ steps: 4, left: 6 });
    expect(readCarry('conversation', { turns: 4 })).toEqual({ turns: 4 });
  });

  it('upgrades step by step from the version the carry names', () => {
    expect(readCarry('run', { steps: 7 }, 2, registry)).toEqual({ steps: 7, left: 3 });
    expect(readCarry('run', { steps: 7, left: 1 }, 3, registry)).toEqual({ steps: 7, left: 1 });
  });

  it("refuses a newer build's carry, saying how to run it", () => {
    expect(() => readCarry('conversation', {}, CARRY_VERSIONS.conversation.current + 1)).toThrow(
      /the conversation state carried into this run is version 2, written by a newer build; this build reads up to version 1\. Let the newer build run it/,
    );
  });

  it('refuses a version no build writes, and a gap in the upgrades', () => {
    expect(() => readCarry('run', {}, 0)).toThrow(/names version 0, which no build writes/);
    expect(() => readCarry('run', {}, 1.5)).toThrow(/which no build writes/);
    const gap = { ...registry, run: { current: 3, upgrades: [registry.run.upgrades[0]] } };
    expect(() => readCarry('run', { turns: 1 }, 1, gap)).toThrow(/no upgrade of the run state from version 2/);
  });

  it("gives a workflow its input with the carry in this build's shape and version, and leaves a first run's alone", () => {
    const first: { tenant: string; carry?: object } = { tenant: 'acme' };
    expect(carriedIn('tenantLedger', first)).toBe(first);
    expect(carriedIn('tenantLedger', { tenant: 'acme', carry: { spent: 1 } })).toEqual({
      tenant: 'acme',
      carry: { spent: 1 },
      carryVersion: CARRY_VERSIONS.tenantLedger.current,
    });
  });

  it('has an upgrade for every version below the current one, each saying why and since when', () => {
    for (const [kind, { current, upgrades }] of Object.entries(CARRY_VERSIONS)) {
      expect({ kind, froms: upgrades.map((u) => u.from) }).toEqual({
        kind,
        froms: Array.from({ length: current - 1 }, (_, i) => i + 1),
      });
      for (const u of upgrades) expect(u.why.length && u.since.length).toBeTruthy();
    }
  });
});
