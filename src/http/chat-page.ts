import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The web chat page served at `/`: one static HTML file (`chat-page.html`, beside this module in
 * the sources and in `dist`), its script inline, so it needs no bundler and ships inside the
 * package. It uses only the HTTP API: `GET /agents`, `POST /conversations/:id/messages` (sent
 * with `Prefer: wait=0`, so the request returns once the message is delivered),
 * `GET /conversations/:id/events` (an EventSource, which reconnects with `Last-Event-ID` by
 * itself), approvals and cancel.
 */

/** What the page needs from the server. */
export interface ChatPageConfig {
  /** A conversation's Temporal UI address without the id (the id is appended), or undefined. */
  workflowUrlPrefix?: string;
}

/** Where the server's configuration goes: a comment in the page's script. */
const CONFIG_MARKER = '/*CONFIG*/';

let page: string | undefined;

/** The page's HTML, with its configuration inlined. */
export function chatPageHtml(config: ChatPageConfig): string {
  // Read once, on the first request: the file does not change while the server runs.
  page ??= readFileSync(join(__dirname, 'chat-page.html'), 'utf8');
  // `<` escaped so the JSON cannot close the script element.
  const json = JSON.stringify(config).replace(/</g, '\\u003c');
  return page.replace(CONFIG_MARKER, () => `window.DURABLE_AGENTS = ${json};`);
}
