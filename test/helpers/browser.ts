import { existsSync } from 'node:fs';

/** The Chromium the browser tests drive: `CHROMIUM_PATH`, else Debian's (`npm run setup:browser`). */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * `describe` for tests in a real browser. Without one (a fresh clone, before `npm run
 * setup:browser`) they are skipped (test/global-setup.ts says so, once) rather than failing; `.ci/run` installs
 * Chromium and sets `REQUIRE_BROWSER=1`, under which a missing browser fails instead.
 */
export function describeInBrowser(name: string, tests: () => void): void {
  if (existsSync(CHROMIUM_PATH)) return describe(name, tests);
  if (process.env.REQUIRE_BROWSER === '1')
    return describe(name, () => {
      it('has a browser to run in', () => {
        throw new Error(`no Chromium at ${CHROMIUM_PATH}: run \`npm run setup:browser\` (or set CHROMIUM_PATH)`);
      });
    });
  // The global setup says once that they are skipped.
  describe.skip(name, tests);
}
