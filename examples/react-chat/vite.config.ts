import { defineConfig } from 'vite';

// `npm run dev` serves the page on :5173 and sends /api to durable-agents' HTTP API
// (`npm run serve` in the repository, on :8080 unless DURABLE_AGENTS_URL says otherwise).
export default defineConfig({
  esbuild: { jsx: 'automatic' },
  server: {
    proxy: { '/api': process.env.DURABLE_AGENTS_URL ?? 'http://127.0.0.1:8080' },
  },
});
