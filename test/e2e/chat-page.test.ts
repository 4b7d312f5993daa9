/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
import { mkdirSync } from 'node:fs';
import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { createHttpApi } from '../../src/http/http-api';
import type { ChatRequest } from '../../src/testing/openai-compatible-server';
import { defineAgent, type AgentDefinition } from '../../src/agents/define-agent';
import { waitForEvent } from '../../src/core/time/durable-waits';
import { ROOT } from '../helpers/processes';
import { CHROMIUM_PATH, describeInBrowser } from '../helpers/browser';
import { call, lastOf, startModel } from '../helpers/scripted-model';
import { createTestWorker, useTestTemporal } from '../helpers/temporal';
import { testRegistry } from '../helpers/test-tools';

/**
 * The web chat page in a real browser (Debian's Chromium, headless) against the HTTP API, a real
 * worker and Temporal server. Screenshots go to test-artifacts/ (not committed).
 */
const temporal = useTestTemporal();
const ARTIFACTS = join(ROOT, 'test-artifacts');
const STORY = 'Once upon a time a durable agent streamed its answer word by word, and nobody lost a single token.';

function model(req: ChatRequest) {
  const last = req.messages[req.messages.length - 1];
  const user = lastOf(req, 'user');
  if (last.role === 'tool') return { content: `tool said: ${last.content}` };
  if (user === 'pay bob') return call(['transfer', { to: 'bob', amount: 5 }]);
  if (user === 'pay 30') return call(['pay_from_account', { amount: 30 }]);
  if (user === 'wait for it') return call(['slow', { key: 'chat-page' }]);
  if (user === 'wait for the payment') return call(['wait_for_event', { name: 'payment_received' }]);
  if (user === 'write the notes') return call(['write_file', { path: 'notes/a.txt', content: 'hello\n' }]);
  return { content: STORY, chunkDelayMs: 60 };
}

let browser: Browser;

async function withPage(
  body: (page: Page, base: string) => Promise<void>,
  agents?: AgentDefinition<any>[],
): Promise<void> {
  const m = await startModel(model);
  const t = temporal();
  const { worker, taskQueue } = await createTestWorker(t, { baseURL: m.baseURL, registry: testRegistry(), agents });
  const server: Server = createHttpApi({
    client: t.client,
    taskQueue,
    workflowUrlPrefix: 'http://ui.example:8233/namespaces/default/workflows/',
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const page = await browser.newPage();
  try {
    await worker.runUntil(body(page, `http://127.0.0.1:${(server.address() as AddressInfo).port}`));
  } finally {
    await page.close();
    server.closeAllConnections();
    server.close();
  }
}

async function send(page: Page, message: string): Promise<void> {
  await page.fill('#message', message);
  await page.click('#send');
}

describeInBrowser('the chat page', () => {
  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: ['--no-sandbox'] });
  });
  afterAll(async () => browser?.close());

  it('streams the answer into the page, shows tool calls as collapsible steps, approves a call and cancels a turn', async () => {
    await withPage(async (page, base) => {
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(e.message));
      await page.goto(base);
      const conversationId = decodeURIComponent(/conversation=([^&]+)/.exec(page.url())![1]);
      // No Temporal UI link for a conversation that does not exist yet; its first message starts it.
      expect(await page.isHidden('#ui-link')).toBe(true);

      // The answer grows while the model writes it.
      await send(page, 'tell me a story');
      await page.locator('#ui-link').waitFor({ state: 'visible' });
      expect(await page.getAttribute('#ui-link', 'href')).toBe(
        `http://ui.example:8233/namespaces/default/workflows/${conversationId}`,
      );
      const text = page.locator('.agent .text').last();
      const seen = new Set<string>();
      for (let i = 0; i < 200 && (await text.textContent().catch(() => '')) !== STORY; i++) {
        const now = (await text.textContent().catch(() => '')) ?? '';
        if (now) seen.add(now);
        await page.waitForTimeout(25);
      }
      expect(await text.textContent()).toBe(STORY);
      const partial = [...seen].filter((s) => s !== STORY);
      expect(partial.length).toBeGreaterThan(1);
      for (const p of partial) expect(STORY.startsWith(p)).toBe(true);
      await page.locator('.agent .done').first().waitFor();

      // A call that needs approval: buttons, then the tool as a step with its arguments and result.
      await send(page, 'pay bob');
      await page.locator('.approval button.approve').click();
      await page.locator('.approval').getByText('Approved').waitFor();
      const tool = page.locator('details.tool').last();
      await tool.locator('summary', { hasText: '✓ transfer(to="bob", amount=5)' }).waitFor();
      await tool.locator('summary').click();
      expect(await tool.locator('pre.result').textContent()).toBe('sent 5 to bob');
      await page.locator('.agent .text', { hasText: 'tool said: sent 5 to bob' }).waitFor();

      // A tool that asks a person mid-call: its question, answered in words.
      await send(page, 'pay 30');
      const question = page.locator('.approval', { hasText: 'Pay 30 from which account?' });
      await question.locator('input.answer').fill('account 9');
      await question.locator('button.approve', { hasText: 'Answer' }).click();
      await page.locator('.agent .text', { hasText: 'tool said: paid 30 from account 9' }).waitFor();
      await page.locator('.agent .done').nth(1).waitFor();

      // A turn stuck in a slow tool: Cancel ends it; the conversation stays open.
      await send(page, 'wait for it');
      await page.locator('details.tool summary', { hasText: '… slow(key="chat-page")' }).waitFor();
      await page.click('#cancel');
      await page.locator('.agent .done', { hasText: '(cancelled)' }).waitFor();
      await page.locator('details.tool summary', { hasText: '✗ slow(key="chat-page")' }).waitFor();
      expect(await page.isHidden('#cancel')).toBe(true);

      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: join(ARTIFACTS, 'chat-page.png'), fullPage: true });

      // Reloading resumes the conversation from the URL, with its latest turn.
      await page.reload();
      await page.locator('.user', { hasText: 'wait for it' }).waitFor();
      expect(errors).toEqual([]);
    });
  });

  it('shows the files a call changed in the workspace, beside the call', async () => {
    const coder = defineAgent({ name: 'coder', instructions: 'Write files.', tools: [], workspace: true });
    await withPage(
      async (page, base) => {
        const errors: string[] = [];
        page.on('pageerror', (e) => errors.push(e.message));
        await page.goto(base);
        await page.locator('#agent option[value="coder"]').waitFor({ state: 'attached' });
        await page.selectOption('#agent', 'coder');
        await send(page, 'write the notes');
        const tool = page.locator('details.tool').last();
        await tool.locator('summary', { hasText: '✓ write_file(' }).waitFor();
        expect(await tool.locator('summary .files').textContent()).toBe(' · 1 file');
        await tool.locator('summary').click();
        expect(await tool.locator('pre.files').textContent()).toBe('+ notes/a.txt');
        await page.locator('.agent .text', { hasText: 'tool said: wrote 6 bytes to notes/a.txt' }).waitFor();
        expect(errors).toEqual([]);
      },
      [coder],
    );
  });

  it('says on an empty page which agent and model answer, offers questions to try, and lays out at 1200 and 390 px', async () => {
    const helper = defineAgent({
      name: 'helper',
      description: 'Answers questions about stories, and adds numbers when asked to',
      instructions: 'Help.',
      tools: ['add'],
      model: 'helper-model',
      examples: ['tell me a story', 'What is 2 + 3?'],
    });
    const other = defineAgent({
      name: 'a-second-agent-with-a-rather-long-name',
      description: 'x'.repeat(200),
      instructions: 'Other.',
      tools: [],
    });
    await withPage(
      async (page, base) => {
        const errors: string[] = [];
        page.on('pageerror', (e) => errors.push(e.message));
        mkdirSync(ARTIFACTS, { recursive: true });
        for (const [width, height] of [
          [1200, 800],
          [390, 844],
        ]) {
          await page.setViewportSize({ width, height });
          await page.goto(base);
          // The first named agent answers, and the page says so: its model, its tools, questions to try.
          await page.locator('#empty h2', { hasText: 'Ask the helper agent' }).waitFor();
          expect(await page.textContent('#empty .about')).toBe(
            'Answers questions about stories, and adds numbers when asked to · model helper-model · tools: add',
          );
          expect(await page.locator('#empty .examples button').allTextContents()).toEqual([
            'tell me a story',
            'What is 2 + 3?',
          ]);
          expect(await page.isHidden('#ui-link')).toBe(true);
          const layout = await page.evaluate(() => ({
            header: document.querySelector('header')!.getBoundingClientRect().height,
            select: document.querySelector('#agent')!.getBoundingClientRect().width,
            overflow: document.documentElement.scrollWidth - window.innerWidth,
            offscreen: [...document.querySelectorAll('header > *')].filter((e) => {
              const r = e.getBoundingClientRect();
              return !(e as HTMLElement).hidden && r.width > 0 && (r.right > window.innerWidth + 1 || r.left < -1);
            }).length,
          }));
          await page.screenshot({ path: join(ARTIFACTS, `chat-page-empty-${width}.png`) });
          // One row at 1200 px, with a picker the long description does not stretch; nothing off screen on a phone.
          if (width === 1200) expect(layout.header).toBeLessThan(60);
          expect(layout.select).toBeLessThanOrEqual(230);
          expect(layout.overflow).toBeLessThanOrEqual(0);
          expect(layout.offscreen).toBe(0);
        }
        // Another agent says so too; a question to try is sent with a click.
        await page.selectOption('#agent', 'a-second-agent-with-a-rather-long-name');
        await page.locator('#empty h2', { hasText: 'Ask the a-second-agent-with-a-rather-long-name agent' }).waitFor();
        expect(await page.locator('#empty .examples button').allTextContents()).toEqual(['What can you do?']);
        await page.selectOption('#agent', 'helper');
        await page.locator('#empty .examples button', { hasText: 'tell me a story' }).click();
        await page.locator('.user', { hasText: 'tell me a story' }).waitFor();
        await page.locator('.agent .text', { hasText: 'Once upon a time' }).waitFor();
        expect(await page.isVisible('#empty')).toBe(false);
        await page.locator('#ui-link').waitFor({ state: 'visible' });
        await page.screenshot({ path: join(ARTIFACTS, 'chat-page-answered-390.png') });
        expect(errors).toEqual([]);
      },
      [helper, other],
    );
  });

  it('shows a wait for an event and its arrival, and an approval with its deadline and escalation', async () => {
    const collector = defineAgent({
      name: 'collector',
      instructions: 'You collect payments.',
      tools: [waitForEvent, 'transfer'],
      approvalTimeout: '2s',
      onApprovalTimeout: 'escalate',
    });
    await withPage(
      async (page, base) => {
        const errors: string[] = [];
        page.on('pageerror', (e) => errors.push(e.message));
        await page.goto(base);
        await page.selectOption('#agent', 'collector');
        const conversationId = decodeURIComponent(/conversation=([^&]+)/.exec(page.url())![1]);
        await send(page, 'wait for the payment');
        await page.locator('.wait', { hasText: '⏸ Waiting for the event payment_received (until ' }).waitFor();
        const delivered = await fetch(`${base}/conversations/${conversationId}/events/payment_received`, {
          method: 'POST',
          body: '{"amount":42}',
        });
        expect(delivered.status).toBe(202);
        await page.locator('.note.event', { hasText: 'Event received: payment_received' }).waitFor();
        await page.locator('.wait', { hasText: '— the event arrived' }).waitFor();
        await page.locator('.agent .text', { hasText: 'tool said: {"amount":42}' }).waitFor();
        await page.locator('.agent .done').first().waitFor();

        await send(page, 'pay bob');
        await page.locator('.approval .deadline', { hasText: 'decide by ' }).waitFor();
        await page.locator('.approval .deadline.escalated', { hasText: 'Escalated: no decision in time' }).waitFor();
        await page.locator('.approval button.approve').click();
        await page.locator('.approval').getByText('Approved').waitFor();
        await page.locator('.agent .text', { hasText: 'tool said: sent 5 to bob' }).waitFor();
        mkdirSync(ARTIFACTS, { recursive: true });
        await page.screenshot({ path: join(ARTIFACTS, 'chat-page-waits.png'), fullPage: true });
        expect(errors).toEqual([]);
      },
      [collector],
    );
  });
});
