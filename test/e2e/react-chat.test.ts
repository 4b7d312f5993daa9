/// <reference lib="dom" />
import { freePort } from '../../src/connection/dev-server';
import { randomUUID } from 'node:crypto';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { extname, join, normalize } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { httpApiHandler } from '../../src/http/http-api';
import type { ChatRequest } from '../../src/testing/openai-compatible-server';
import { CHROMIUM_PATH, describeInBrowser } from '../helpers/browser';
import { cleanEnv, eventually, ROOT, startTs, type Started } from '../helpers/processes';
import { startHttpApi } from '../helpers/http-api';
import { call, lastOf, startModel } from '../helpers/scripted-model';
import { createTestWorker, useTestTemporal } from '../helpers/temporal';
import { testRegistry, transfers } from '../helpers/test-tools';

/**
 * The React example (examples/react-chat: `useChat` from `@ai-sdk/react`), built with Vite as its
 * README says, served beside the HTTP API and driven in a real browser.
 */
const temporal = useTestTemporal();
const EXAMPLE = join(ROOT, 'examples', 'react-chat');
const TYPES: Record<string, string> = {
  '.html': 'text/html',
  '.js': 'text/javascript',
  '.css': 'text/css',
};

/** The chat id of a page (its URL's hash). */
async function chatIdOf(page: Page): Promise<string> {
  return decodeURIComponent(await page.evaluate(() => location.hash.slice(1)));
}

/** 60 words, one every 100 ms: long enough that a reload lands while it is written, on a loaded machine too. */
const STORY = Array.from({ length: 60 }, (_, i) => `w${i}`).join(' ');

/** Answers to `say ...` so far: each answer is numbered, so a regenerated one differs. */
let said = 0;
/** The user messages of the model's latest request. */
let lastAsked: string[] = [];

function model(req: ChatRequest) {
  const last = req.messages[req.messages.length - 1];
  lastAsked = req.messages.filter((m) => m.role === 'user').map((m) => String(m.content));
  const first = req.messages.find((m) => m.role === 'user')?.content;
  // A slow first call that asks for a tool, then a slow answer: messages sent meanwhile meet a
  // running turn, and a steering one is read by the second call.
  if (first === 'quote then story')
    return req.messages.some((m) => m.role === 'tool')
      ? { content: STORY, chunkDelayMs: 100 }
      : // A slow first call: the page shows the turn working before any text comes.
        new Promise((r) => setTimeout(r, 4_000)).then(() => call(['stock_quote', { symbol: 'ACME' }]));
  lastAsked = req.messages.filter((m) => m.role === 'user').map((m) => String(m.content));
  if (lastOf(req, 'user').startsWith('say ')) return { content: `${lastOf(req, 'user').slice(4)} #${++said}` };
  if (lastOf(req, 'user').startsWith('tell a story')) return { content: STORY, chunkDelayMs: 100 };
  if (last.role === 'tool') return { content: `tool said: ${last.content}`, chunkDelayMs: 30 };
  if (lastOf(req, 'user') === 'pay bob') return call(['transfer', { to: 'bob', amount: 7 }]);
  return call(['stock_quote', { symbol: 'ACME' }]);
}

it('type-checks as its tsconfig says (strict, the AI SDK and React types)', () => {
  const checked = spawnSync(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', EXAMPLE], {
    encoding: 'utf8',
  });
  expect(checked.stdout + checked.stderr).toBe('');
  expect(checked.status).toBe(0);
}, 60_000);

describeInBrowser('the React example on useChat', () => {
  let browser: Browser;
  let dist: string;
  beforeAll(async () => {
    dist = mkdtempSync(join(tmpdir(), 'react-chat-'));
    // `vite build`, as the example's README runs it (in a process of its own: Vite is ESM-only).
    const built = spawnSync(
      process.execPath,
      [
        join(ROOT, 'node_modules', 'vite', 'bin', 'vite.js'),
        'build',
        EXAMPLE,
        '--outDir',
        dist,
        '--emptyOutDir',
        '--logLevel',
        'warn',
      ],
      { cwd: EXAMPLE, encoding: 'utf8' },
    );
    if (built.status !== 0) throw new Error(`vite build failed:\n${built.stdout}\n${built.stderr}`);
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: ['--no-sandbox'] });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    rmSync(dist, { recursive: true, force: true });
  });

  /**
   * The built page and the HTTP API (with a worker and the scripted model) behind one server, as
   * `vite` proxies /api in development. `apiDown`: the API is dead (its requests' connections cut).
   */
  async function pageWithApi() {
    const m = await startModel(model);
    const t = temporal();
    const { worker, taskQueue } = await createTestWorker(t, { baseURL: m.baseURL, registry: testRegistry() });
    const api = httpApiHandler({ client: t.client, taskQueue, chatPage: false });
    const served = {
      apiDown: false,
      /** Resumes (`GET /api/chat/:id/stream`) wait here while set, until `held` is run. */
      holdResumes: false,
      held: [] as Array<() => void>,
      worker,
      base: '',
      server: undefined as unknown as Server,
    };
    served.server = createServer((req, res) => {
      if (req.url?.startsWith('/api/') || req.url?.startsWith('/conversations/')) {
        if (served.apiDown) return void req.socket.destroy();
        if (served.holdResumes && req.method === 'GET' && /^\/api\/chat\/[^/]+\/stream/.test(req.url))
          return void served.held.push(() => api(req, res));
        return api(req, res);
      }
      const path = normalize(req.url === '/' || !req.url ? '/index.html' : req.url.split('?')[0]);
      readFile(join(dist, path)).then(
        (body) => res.writeHead(200, { 'content-type': TYPES[extname(path)] ?? 'application/octet-stream' }).end(body),
        () => res.writeHead(404).end(),
      );
    });
    served.server.listen(0, '127.0.0.1');
    await once(served.server, 'listening');
    served.base = `http://127.0.0.1:${(served.server.address() as AddressInfo).port}`;
    // The same object the server reads (`apiDown`, `holdResumes`), with `inPages`.
    return Object.assign(served, {
      /** Runs `body` on `count` new pages while the worker runs; no page may throw; closes all after. */
      inPages: async (count: number, body: (...pages: Page[]) => Promise<void>) => {
        const pages = await Promise.all(Array.from({ length: count }, () => browser.newPage()));
        const errors: string[] = [];
        for (const page of pages) page.on('pageerror', (e) => errors.push(e.message));
        try {
          await worker.runUntil(() => body(...pages));
          expect(errors).toEqual([]);
        } finally {
          for (const page of pages) await page.close();
          served.server.closeAllConnections();
          served.server.close();
        }
      },
    });
  }

  it('runs a tool-calling turn and an approval in the page, and a reload shows the same conversation', async () => {
    const served = await pageWithApi();
    const { base } = served;
    await served.inPages(1, async (page) => {
      await page.goto(base);
      const input = page.getByPlaceholder('Ask the agent…');
      // The last turn's stream has finished (its Stop button is gone): the next message starts a turn of its own.
      await page.getByRole('button', { name: 'Stop' }).waitFor({ state: 'hidden' });
      await input.fill('price of ACME');
      await input.press('Enter');
      const reply = page.locator('li.assistant').first();
      await reply.locator('.tool[data-state="output-available"]', { hasText: 'stock_quote' }).waitFor();
      await reply.getByText(/tool said: .*42\.5/).waitFor();
      await reply.getByText(/completed · \d+ tokens/).waitFor();

      await page.getByRole('button', { name: 'Stop' }).waitFor({ state: 'hidden' }); // the last turn's stream has finished
      await input.fill('pay bob');
      await input.press('Enter');
      const before = transfers.length;
      await page.getByRole('button', { name: 'Approve' }).click();
      const paid = page.locator('li.assistant').nth(1);
      await paid.locator('.tool[data-state="output-available"]', { hasText: 'sent 7 to bob' }).waitFor();
      await paid.getByText('tool said: sent 7 to bob').waitFor();
      expect(transfers.length).toBe(before + 1);

      // A reload (the id is in the URL) loads the conversation from the workflow.
      await page.reload();
      await page.locator('li.assistant').nth(1).getByText('tool said: sent 7 to bob').waitFor();
      expect(await page.locator('li.user > p').allTextContents()).toEqual(['price of ACME', 'pay bob']);
    });
  }, 120_000);

  it('stops the durable turn with Stop, keeps answering across a reload, and reconnects by itself when the API dies', async () => {
    const served = await pageWithApi();
    const { base, server } = served;
    const statusOf = async (id: string) =>
      ((await (await fetch(`${base}/api/chat/${id}/messages`)).json()) as Array<{ metadata?: { status?: string } }>)
        .map((x) => x.metadata?.status)
        .filter(Boolean);
    await served.inPages(1, async (page) => {
      await page.goto(base);
      await page.waitForFunction(() => location.hash.length > 1);
      const id = decodeURIComponent(await page.evaluate(() => location.hash.slice(1)));
      const input = page.getByPlaceholder('Ask the agent…');

      // Stop mid-answer: the durable turn ends cancelled, and the next message is answered at once.
      await input.fill('tell a story');
      await input.press('Enter');
      await page
        .locator('li.assistant')
        .first()
        .getByText(/^w0 w1 w2 w3/)
        .waitFor();
      await page.getByRole('button', { name: 'Stop' }).click();
      expect(
        await eventually(
          async () => (await fetch(`${base}/conversations/${id}`).then((r) => r.json())).state === 'idle',
          10_000,
        ),
      ).toBe(true);
      const turns = await fetch(`${base}/conversations/${id}`).then((r) => r.json());
      expect(turns.turns).toBe(1);
      const history = await fetch(`${base}/api/chat/${id}/messages`).then((r) => r.json());
      expect(history[1].parts.map((p: { text?: string }) => p.text ?? '').join('')).toMatch(/^w0 w1 w2/);
      await input.fill('price of ACME');
      await input.press('Enter');
      await page
        .locator('li.assistant')
        .nth(1)
        .getByText(/tool said: .*42\.5/)
        .waitFor();

      // A reload mid-answer does not cancel: the reloaded page resumes the turn to its end.
      // The last turn's stream has finished (its Stop button is gone): the next message starts a turn of its own.
      await page.getByRole('button', { name: 'Stop' }).waitFor({ state: 'hidden' });
      await input.fill('tell a story again');
      await input.press('Enter');
      await page
        .locator('li.assistant')
        .nth(2)
        .getByText(/^w0 w1/)
        .waitFor();
      await page.reload();
      // (A turn that ends between the page loading the history and asking to resume is shown as
      // well: see the test of a held resume.)
      const resumed = page.locator('li.assistant').nth(2).locator('p').first();
      await resumed.getByText(/w59$/).waitFor({ timeout: 20_000 });
      expect(await resumed.textContent()).toBe(STORY);
      expect(await statusOf(id)).toEqual(['cancelled', 'completed', 'completed']);

      // The API dies mid-answer and comes back: the open page completes the answer, nothing lost or repeated.
      // The last turn's stream has finished (its Stop button is gone): the next message starts a turn of its own.
      await page.getByRole('button', { name: 'Stop' }).waitFor({ state: 'hidden' });
      await input.fill('tell a story once more');
      await input.press('Enter');
      const last = page.locator('li.assistant').nth(3);
      await last.getByText(/^w0 w1 w2/).waitFor();
      served.apiDown = true;
      server.closeAllConnections();
      // The outage's length: the page must ride out an API that is gone for a while.
      await new Promise((r) => setTimeout(r, 800));
      served.apiDown = false;
      await last.getByText(/completed · \d+ tokens/).waitFor({ timeout: 20_000 });
      expect(await last.locator('p').first().textContent()).toBe(STORY);
      expect(await page.locator('p.error').count()).toBe(0);
    });
  }, 120_000);

  it('reaches the busy policies from the page: a refusal is said and its message dropped, a steer shows once in the running answer, Stop shows the stopped status live', async () => {
    const served = await pageWithApi();
    const { base } = served;
    await served.inPages(1, async (page) => {
      await page.goto(base);
      const input = page.getByPlaceholder('Ask the agent…');
      await input.fill('quote then story');
      await input.press('Enter');
      const answer = page.locator('li.assistant').first();
      await page.getByRole('button', { name: 'Stop' }).waitFor();

      // Refused while the turn runs: the sentence shows, the message leaves the page, the turn goes on.
      await page.getByLabel('While a turn runs').selectOption('reject');
      await input.fill('refuse me');
      await input.press('Enter');
      await page.locator('p.error', { hasText: /the conversation is busy/ }).waitFor();
      await page.waitForTimeout(500);
      expect(await page.locator('li.user', { hasText: 'refuse me' }).count()).toBe(0);
      expect(await page.locator('p.error').textContent()).not.toMatch(/errorType|^\{/);
      // Still busy with the running turn (the page learns it from the turn watcher, which may lag
      // the refusal on a busy machine).
      await page.getByRole('button', { name: 'Stop' }).waitFor({ timeout: 10_000 });

      // Steered into the running turn: its next model call reads it; shown once, inside the
      // answer, beside the tool part (which stays).
      await page.getByLabel('While a turn runs').selectOption('steer');
      await input.fill('mention cats');
      await input.press('Enter');
      await answer.locator('.tool[data-state="output-available"]', { hasText: 'stock_quote' }).waitFor();
      await answer.locator('.steered', { hasText: 'mention cats' }).waitFor();
      await answer.getByText(/^w0 w1/).waitFor();
      expect(await page.getByText('mention cats').count()).toBe(1);
      expect(await answer.locator('.tool', { hasText: 'stock_quote' }).count()).toBe(1);
      expect(lastAsked).toContain('mention cats');

      // Stop: the answer ends stopped, live, without a reload.
      await page.getByRole('button', { name: 'Stop' }).click();
      await answer.getByText(/^stopped · \d+ tokens/).waitFor({ timeout: 15_000 });
      await page.getByRole('button', { name: 'Stop' }).waitFor({ state: 'hidden' });
      expect(await answer.locator('.tool', { hasText: 'stock_quote' }).count()).toBe(1);
      // The history says the same (stopped), and the refused message was never kept.
      const history = await (
        await fetch(`${base}/api/chat/${encodeURIComponent(await chatIdOf(page))}/messages`)
      ).json();
      expect(history.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant']);
      expect(history[1].metadata).toMatchObject({ status: 'cancelled', stopped: true });
    });
  }, 120_000);

  it('regenerates an answer and edits an earlier message as branches; the earlier ones stay readable and can be current again', async () => {
    const served = await pageWithApi();
    const { base } = served;
    await served.inPages(1, async (page) => {
      const texts = () => page.locator('li').evaluateAll((lis) => lis.map((li) => li.querySelector('p')?.textContent));
      said = 0;
      await page.goto(base);
      const input = page.getByPlaceholder('Ask the agent…');
      await input.fill('say hi');
      await input.press('Enter');
      await page.locator('li.assistant').getByText('hi #1').waitFor();
      const id = decodeURIComponent(new URL(page.url()).hash.slice(1));

      // regenerate(): a new answer in place of the first; that one stays on its branch.
      await page.locator('li.assistant').getByRole('button', { name: 'Regenerate' }).click();
      await page.locator('li.assistant').getByText('hi #2').waitFor();
      expect(await texts()).toEqual(['say hi', 'hi #2']);
      const main = await page.evaluate(
        (id) => fetch(`/api/chat/${encodeURIComponent(id)}/messages?branch=main`).then((r) => r.json()),
        id,
      );
      expect(main.map((m: any) => m.parts.find((p: any) => p.type === 'text')?.text)).toEqual(['say hi', 'hi #1']);
      await page.getByRole('button', { name: 'Stop' }).waitFor({ state: 'hidden' }); // the last turn's stream has finished
      await input.fill('say more');
      await input.press('Enter');
      await page.locator('li.assistant').getByText('more #3').waitFor();

      // An earlier message edited: answered from that point, with nothing after it.
      await page.locator('li.user').first().getByRole('button', { name: 'Edit' }).click();
      await page.getByLabel('Edit message').fill('say bye');
      await page.getByRole('button', { name: 'Save' }).click();
      await page.locator('li.assistant').getByText('bye #4').waitFor();
      expect(await texts()).toEqual(['say bye', 'bye #4']);
      expect(lastAsked).toEqual(['say bye']);

      // The branch before the edit, current again; a reload keeps it.
      const branches = page.getByLabel('Branch');
      await eventually(async () => (await branches.locator('option').count()) === 3);
      await branches.selectOption('b1');
      await page.locator('li.assistant').getByText('more #3').waitFor();
      expect(await texts()).toEqual(['say hi', 'hi #2', 'say more', 'more #3']);
      await page.reload();
      await page.locator('li.assistant').getByText('more #3').waitFor();
      await page.getByRole('button', { name: 'Stop' }).waitFor({ state: 'hidden' }); // the last turn's stream has finished
      await input.fill('say last');
      await input.press('Enter');
      await page.locator('li.assistant').getByText('last #5').waitFor();
      expect(lastAsked).toEqual(['say hi', 'say more', 'say last']);
    });
  }, 120_000);

  it('a reload whose resume comes only after the turn ended still shows the whole answer', async () => {
    const served = await pageWithApi();
    const { base } = served;
    await served.inPages(1, async (page) => {
      await page.goto(base);
      const input = page.getByPlaceholder('Ask the agent…');
      await input.fill('tell a story');
      await input.press('Enter');
      await page
        .locator('li.assistant')
        .getByText(/^w0 w1/)
        .waitFor();
      const id = decodeURIComponent(new URL(page.url()).hash.slice(1));
      // The reloaded page loads the history while the turn runs; its resume reaches the API after the turn ended.
      served.holdResumes = true;
      await page.reload();
      await page.locator('li.user').getByText('tell a story').waitFor();
      expect(
        await eventually(async () => {
          const r = await fetch(`${base}/conversations/${encodeURIComponent(id)}`);
          return ((await r.json()) as { state: string }).state === 'idle';
        }, 20_000),
      ).toBe(true);
      expect(served.held.length).toBeGreaterThan(0);
      served.holdResumes = false;
      served.held.splice(0).forEach((go) => go());
      const answer = page.locator('li.assistant').first().locator('p').first();
      await answer.getByText(/w59$/).waitFor({ timeout: 10_000 });
      expect(await answer.textContent()).toBe(STORY);
    });
  }, 120_000);

  it('shows a turn another tab started, live, without a reload', async () => {
    const served = await pageWithApi();
    const { base } = served;
    await served.inPages(2, async (first, second) => {
      await first.goto(base);
      const input = first.getByPlaceholder('Ask the agent…');
      await input.fill('price of ACME');
      await input.press('Enter');
      await first
        .locator('li.assistant')
        .first()
        .getByText(/completed · \d+ tokens/)
        .waitFor();
      // The second tab opens the same chat, then the first sends another message: the second shows it live.
      await second.goto(first.url());
      await second
        .locator('li.assistant')
        .first()
        .getByText(/tool said: .*42\.5/)
        .waitFor();
      // The first tab takes a message once its last turn's stream has finished (Send is back).
      await first.getByRole('button', { name: 'Send' }).waitFor();
      await input.fill('tell a story');
      await input.press('Enter');
      await second.locator('li.user').nth(1).getByText('tell a story').waitFor({ timeout: 20_000 });
      await second.locator('li.assistant').nth(1).getByText(STORY, { exact: true }).waitFor({ timeout: 20_000 });
      expect(await second.locator('li.assistant').count()).toBe(2);
      expect(await first.locator('li.assistant').nth(1).locator('p').first().textContent()).toBe(STORY);
    });
  }, 120_000);

  /** `vite dev` of the example on a free port, proxying /api to `api` as its vite.config.ts says; resolves once it serves. */
  async function viteDev(api: string) {
    const port = await freePort();
    const vite = spawn(
      process.execPath,
      [
        join(ROOT, 'node_modules', 'vite', 'bin', 'vite.js'),
        '--host',
        '127.0.0.1',
        '--port',
        String(port),
        '--strictPort',
      ],
      // NO_COLOR: Vite colours its banner when CI is set (picocolors), which splits the URL with escapes.
      {
        cwd: EXAMPLE,
        env: { ...process.env, DURABLE_AGENTS_URL: api, NO_COLOR: '1', FORCE_COLOR: undefined },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    vite.stdout!.on('data', (d) => (out += d));
    vite.stderr!.on('data', (d) => (out += d));
    const plain = () => out.replace(/\x1b\[[0-9;]*m/g, '');
    if (!(await eventually(() => plain().includes(`http://127.0.0.1:${port}/`), 60_000))) {
      vite.kill('SIGKILL');
      throw new Error(`vite dev did not print its address within 60 s; it printed:\n${out}`);
    }
    return { url: `http://127.0.0.1:${port}/`, stop: () => vite.kill('SIGKILL') };
  }

  it("sends a message from `vite dev` through its own proxy (the README's development setup)", async () => {
    const m = await startModel(model);
    const t = temporal();
    const { worker, taskQueue } = await createTestWorker(t, { baseURL: m.baseURL, registry: testRegistry() });
    // The API as `npm run serve` has it (no tokens, on loopback), and Vite's dev server in front,
    // proxying /api there as the example's vite.config.ts says (its string form changes the Host).
    const api = await startHttpApi({ client: t.client, taskQueue });
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    let vite: Awaited<ReturnType<typeof viteDev>> | undefined;
    try {
      await worker.runUntil(async () => {
        vite = await viteDev(api.base);
        await page.goto(vite.url);
        const input = page.getByPlaceholder('Ask the agent…');
        await input.fill('price of ACME');
        await input.press('Enter');
        await page
          .locator('li.assistant')
          .first()
          .getByText(/tool said: .*42\.5/)
          .waitFor({ timeout: 60_000 });
        expect(await page.locator('p.error').count()).toBe(0);
      });
      expect(errors).toEqual([]);
    } finally {
      await page.close();
      vite?.stop();
      api.close();
    }
  }, 180_000);

  it('through `vite dev`: `serve` (with its own worker) killed mid-answer and started again, the page reconnects by itself and shows the retried answer whole', async () => {
    const m = await startModel(model);
    const port = await freePort();
    const env = cleanEnv({
      TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS!,
      AGENT_TASK_QUEUE: `react-serve-${randomUUID()}`,
      PORT: String(port),
      OPENAI_BASE_URL: m.baseURL,
      OPENAI_API_KEY: 'test',
    });
    let serve: Started = await startTs(['serve.ts'], env, /Press Ctrl\+C/, 120_000);
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (msg) => msg.type() === 'error' && errors.push(msg.text()));
    const vite = await viteDev(`http://127.0.0.1:${port}`);
    try {
      await page.goto(vite.url);
      const input = page.getByPlaceholder('Ask the agent…');
      await input.fill('tell a story');
      await input.press('Enter');
      const answer = page.locator('li.assistant').first();
      await answer.getByText(/^w0 w1 w2/).waitFor({ timeout: 60_000 });
      // The API and the worker that was writing the answer die at once; the proxy keeps the
      // page's stream open, silent. Then `serve` starts again.
      serve.kill('SIGKILL');
      await serve.exited;
      serve = await startTs(['serve.ts'], env, /Press Ctrl\+C/, 120_000);
      // The model call is tried again on the new worker: the page shows its answer, once.
      await answer.getByText(/completed · \d+ tokens/).waitFor({ timeout: 90_000 });
      expect(await answer.locator('p').first().textContent()).toBe(STORY);
      expect(await page.locator('p.error').count()).toBe(0);
      expect(m.requests.length).toBe(2);
      expect(errors.filter((e) => !/Failed to load resource|502|504/.test(e))).toEqual([]);
    } finally {
      await page.close();
      vite.stop();
      serve.kill('SIGKILL');
      await serve.exited;
    }
  }, 300_000);
});
