import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHttpApi, type HttpApiOptions } from '../../src/http/http-api';

/** The HTTP API on a free loopback port, as the protocol tests talk to it. */
export interface RunningHttpApi {
  server: Server;
  /** `http://127.0.0.1:<port>` */
  base: string;
  close(): void;
}

export async function startHttpApi(options: HttpApiOptions): Promise<RunningHttpApi> {
  const server = createHttpApi(options);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    server,
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}
