import { createServer, type Server, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Requests being handled, counted by the outermost middleware; shutdown waits for them, not for sockets. */
export class InFlight {
  active = 0;

  /** Resolves when no request is being handled, or after `timeoutMs`. */
  async idle(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.active > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  }
}

export interface HttpServer {
  server: Server;
  port: number;
  /**
   * Stops accepting, lets in-flight requests finish (up to `timeoutMs`), then closes what is left. A client that
   * half-closes its socket mid-request ends the connection early; the handler's work is still awaited.
   */
  close(timeoutMs: number): Promise<void>;
}

export async function listen(
  handler: (req: IncomingMessage, res: ServerResponse) => Promise<void> | void,
  port: number,
  host: string,
  inFlight?: InFlight,
): Promise<HttpServer> {
  // Koa's handler settles its own errors; the returned promise carries nothing to wait for.
  const server = createServer({ keepAliveTimeout: 65_000, requestTimeout: 30_000 }, (req, res) => void handler(req, res));
  // Behind a load balancer with its own idle timeout (often 60 s), ours must be longer or requests race a close.
  server.headersTimeout = 66_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = (server.address() as AddressInfo).port;
  return {
    server,
    port: bound,
    close: async (timeoutMs) => {
      const started = Date.now();
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => server.closeAllConnections(), timeoutMs);
        timer.unref();
        server.close(() => {
          clearTimeout(timer);
          resolve();
        });
        // Idle keep-alive sockets would otherwise hold close() open until they time out.
        server.closeIdleConnections();
      });
      await inFlight?.idle(Math.max(0, timeoutMs - (Date.now() - started)));
    },
  };
}
