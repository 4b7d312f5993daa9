import { runTs } from '../helpers/processes';

/**
 * The live path's reader stops while its durable read is under way (it had a kept event to give
 * first): that read's failure (a describe the request's signal cancelled, say) is nobody's, and
 * must not be an unhandled rejection, which ends a server on Node's default (and failed a CI run
 * through the Jest worker that held the HTTP API). In a process of its own: Jest's own handling
 * of unhandled rejections would hide it here.
 */
it('leaves no unhandled rejection when the reader stops with a durable read under way', async () => {
  const r = await runTs(['test/fixtures/live-reader-stops.ts'], process.env);
  expect(r.stdout).toContain('ended without an unhandled rejection');
  expect(r.code).toBe(0);
});
