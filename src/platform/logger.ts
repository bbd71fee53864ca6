import { pino, type Logger } from 'pino';

export type { Logger };

/** One line per request: id, method, route template, status, duration. */
export type AccessLog = (requestId: string, method: string, route: string, status: number, ms: number) => void;

interface Writable {
  write(chunk: string): unknown;
}

const LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];

/**
 * JSON logs on stdout. The destination is asynchronous and written in large chunks: the request line is on the
 * api and redirect hot paths, and a write per line, or pino's generic serialiser, costs a good part of a request.
 * The request line is therefore written directly, in pino's own format (level 30, `time`, `process`, `msg`), so
 * every line of the stream still parses the same way. `flush` runs at shutdown.
 */
export function createLogger(options: { level: string; name: string; destination?: NodeJS.WritableStream }): {
  logger: Logger;
  access: AccessLog;
  flush: () => void;
} {
  const settings = {
    level: options.level,
    base: { process: options.name },
    // Secrets never reach the log, whichever object a caller passes in.
    redact: { paths: ['authorization', 'headers.authorization', 'key', 'secret', 'password'], censor: '[redacted]' },
  };
  const destination = options.destination ?? pino.destination({ dest: 1, sync: false, minLength: 16_000, maxWrite: 65_536 });
  const logger = pino(settings, destination);
  const access = LEVELS.indexOf(options.level) <= LEVELS.indexOf('info') ? accessLog(destination, options.name) : () => undefined;
  const flush = () => (destination as { flushSync?: () => void }).flushSync?.();
  return { logger, access, flush };
}

function accessLog(stream: Writable, processName: string): AccessLog {
  const middle = `,"process":${JSON.stringify(processName)},"req_id":"`;
  // The request id is either ours or matched /^[A-Za-z0-9._:-]+$/, and Node only accepts token characters in a
  // method, so neither needs escaping; the route can hold anything the client sent when no route matched.
  return (requestId, method, route, status, ms) => {
    stream.write(
      `{"level":30,"time":${Date.now()}${middle}${requestId}","method":"${method}","route":${JSON.stringify(route)},"status":${status},"ms":${ms},"msg":"request"}\n`,
    );
  };
}
