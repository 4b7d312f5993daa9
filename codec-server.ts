/**
 * `npm run codec-server`: decrypts payloads encrypted with AGENT_ENCRYPTION_KEYS for the Temporal
 * Web UI and the `temporal` CLI. See src/codec/serve-codec.ts.
 */
import { serveCodec } from './src/cli/codec-server-command';
import { exitWhenFlushed } from './src/cli/exit';

serveCodec(process.env).then(
  () => exitWhenFlushed(0),
  (err: Error) => {
    console.error(`codec-server: ${err.message}`);
    exitWhenFlushed(1);
  },
);
