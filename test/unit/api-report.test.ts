import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { apiReport, ENTRY_POINTS } from '../../scripts/api-report';

/** The public API as committed in etc/api-report.md: a change to it shows in review. */
it('matches the committed API report (npm run api-report updates it)', () => {
  const committed = readFileSync(join(__dirname, '..', '..', 'etc', 'api-report.md'), 'utf8');
  expect(apiReport()).toBe(committed);
  const manifest = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8'));
  // Every entry point of the package is in the report, and nothing else.
  expect(ENTRY_POINTS.map(([name]) => name.replace(/^durable-agents/, '.'))).toEqual(
    Object.keys(manifest.exports).filter((k) => k !== './package.json'),
  );
}, 60_000);
