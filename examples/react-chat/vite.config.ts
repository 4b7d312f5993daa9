import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// Inside the durable-agents repository the example uses the package's source; copied into an app
// of your own it uses the installed package (`npm install durable-agents`).
const source = fileURLToPath(new URL('../../src/ui/index.ts', import.meta.url));

// `npm run dev` serves the page on :5173 and sends /api to durable-agents' HTTP API
// (`npm run serve` in the repository, on :8080 unless DURABLE_AGENTS_URL says otherwise).
export default defineConfig({
  esbuild: { jsx: 'automatic' },
  resolve: existsSync(source) ? { alias: { 'durable-agents/ui': source } } : {},
  server: {
    proxy: { '/api': process.env.DURABLE_AGENTS_URL ?? 'http://127.0.0.1:8080' },
  },
});
