import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { ROOT } from './processes';
import { node24 } from './node24';

/** What the AI SDK chat client (test/fixtures/ai-sdk-chat-client.mjs) says when a command is done. */
export interface ChatAnswerLine {
  done: string;
  status: string;
  error?: string;
  messages: Array<{ id: string; role: string; metadata?: any; parts: any[] }>;
  finish?: any;
}

/** The AI SDK's own chat client (`ai`'s AbstractChat and DefaultChatTransport) in a Node 24 process, driven by commands. */
export interface AiSdkChat {
  command(c: Record<string, unknown>): Promise<ChatAnswerLine>;
  /** Resolves once the assistant's text (as the client holds it) has at least `n` characters. */
  textReaches(n: number): Promise<void>;
  close(): Promise<void>;
  stderr(): string;
}

/** Starts the client against `api` (e.g. `http://127.0.0.1:8080/api/chat`) for the chat `id`. */
export function aiSdkChat(api: string, id: string, env: Record<string, string> = {}): AiSdkChat {
  const child: ChildProcess = spawn(node24(), [join(ROOT, 'test', 'fixtures', 'ai-sdk-chat-client.mjs')], {
    cwd: ROOT,
    env: { ...process.env, CHAT_API: api, CHAT_ID: id, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr!.on('data', (d) => (err += d));
  const answers: ChatAnswerLine[] = [];
  const waiting: Array<(a: ChatAnswerLine) => void> = [];
  const textWaiters: Array<{ n: number; resolve: () => void }> = [];
  let text = 0;
  createInterface({ input: child.stdout! }).on('line', (line) => {
    const parsed = JSON.parse(line);
    if ('text' in parsed) {
      text = parsed.text;
      for (const w of textWaiters.filter((w) => text >= w.n)) {
        textWaiters.splice(textWaiters.indexOf(w), 1);
        w.resolve();
      }
      return;
    }
    const w = waiting.shift();
    if (w) w(parsed);
    else answers.push(parsed);
  });
  const exited = new Promise<void>((resolve) => child.on('close', () => resolve()));
  return {
    command(c) {
      child.stdin!.write(`${JSON.stringify(c)}\n`);
      const ready = answers.shift();
      if (ready) return Promise.resolve(ready);
      return new Promise((resolve, reject) => {
        waiting.push(resolve);
        void exited.then(() => reject(new Error(`the AI SDK client exited:\n${err}`)));
      });
    },
    textReaches(n) {
      if (text >= n) return Promise.resolve();
      return new Promise((resolve) => textWaiters.push({ n, resolve }));
    },
    async close() {
      child.stdin!.end();
      child.kill();
      await exited;
    },
    stderr: () => err,
  };
}
