import { createServer, STATUS_CODES, type Server, type IncomingMessage, type ServerResponse, type ServerOptions } from 'node:http';
import { createServer as createTlsServer, type Server as TlsServer } from 'node:https';
import type { SecureContext } from 'node:tls';
import type { Duplex } from 'node:stream';
import { randomBase62 } from './ids.ts';
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
  server: Server | TlsServer;
  port: number;
  /**
   * Stops accepting, lets in-flight requests finish (up to `timeoutMs`), then closes what is left. A client that
   * half-closes its socket mid-request ends the connection early; the handler's work is still awaited.
   */
  close(timeoutMs: number): Promise<void>;
}

/** The answer to a request Node refuses before any handler sees it (431, 408, 400): body and content type. */
export type TransportErrorBody = (status: number, requestId: string) => { contentType: string; body: string };

export interface ListenOptions {
  /** How long a client may take to send a whole request (then 408); 30 s by default. */
  requestTimeoutMs?: number;
  /** The body of answers given before routing; without it, Node's bare answers. */
  transportError?: TransportErrorBody;
  /** Serve HTTPS: the certificate is chosen by SNI for each handshake (an error ends the handshake). */
  sni?: (servername: string, done: (error: Error | null, context?: SecureContext) => void) => void;
}

/** What Node's HTTP parser reports, as the status it would answer (Node's own choice, kept). */
function transportStatus(code: string | undefined): number {
  if (code === 'HPE_HEADER_OVERFLOW') return 431;
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return 408;
  if (code === 'HPE_CHUNK_EXTENSIONS_OVERFLOW') return 413;
  return 400;
}

export async function listen(
  handler: (req: IncomingMessage, res: ServerResponse) => Promise<void> | void,
  port: number,
  host: string,
  inFlight?: InFlight,
  options: ListenOptions = {},
): Promise<HttpServer> {
  const requestTimeout = options.requestTimeoutMs ?? 30_000;
  // Koa's handler settles its own errors; the returned promise carries nothing to wait for.
  // Node checks request timeouts on this interval: a tenth of the timeout, so a 408 comes close to it.
  const httpOptions: ServerOptions = {
    keepAliveTimeout: 65_000,
    requestTimeout,
    connectionsCheckingInterval: Math.min(30_000, Math.max(250, Math.floor(requestTimeout / 10))),
  };
  const server =
    options.sni === undefined
      ? createServer(httpOptions, (req, res) => void handler(req, res))
      : createTlsServer({ ...httpOptions, SNICallback: options.sni, minVersion: 'TLSv1.2' }, (req, res) => void handler(req, res));
  // Behind a load balancer with its own idle timeout (often 60 s), ours must be longer or requests race a close.
  server.headersTimeout = 66_000;
  const transportError = options.transportError;
  if (transportError) {
    // A request head over the limit (431), a request not received in time (408) or one that is not HTTP (400) is
    // refused by Node's parser before any handler runs; answered here in the same shape as every other error.
    server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
      const inProgress = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
      if (error.code === 'ECONNRESET' || !socket.writable || inProgress?.headersSent) {
        socket.destroy();
        return;
      }
      const status = transportStatus(error.code);
      const requestId = `t-${randomBase62(16)}`;
      const { contentType, body } = transportError(status, requestId);
      socket.end(
        `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\nContent-Type: ${contentType}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
          `X-Request-Id: ${requestId}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n${body}`,
      );
    });
  }
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
