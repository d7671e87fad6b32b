import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A stand-in that can be unreachable for a while (connections refused), keeping its state. */
export interface Restartable {
  port: number;
  /** Stops listening and drops open connections: calls are refused until `up`. */
  down: () => Promise<void>;
  /** Listens again on the same port. */
  up: () => Promise<void>;
  close: () => Promise<void>;
}

export async function listenRestartable(server: Server): Promise<Restartable> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const down = () =>
    new Promise<void>((resolve) => {
      if (!server.listening) return resolve();
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return {
    port,
    down,
    up: () =>
      new Promise<void>((resolve, reject) => {
        if (server.listening) return resolve();
        server.once('error', reject);
        server.listen(port, '127.0.0.1', () => {
          server.off('error', reject);
          resolve();
        });
      }),
    close: down,
  };
}
