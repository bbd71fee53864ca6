import { pino, type Logger } from 'pino';

export type { Logger };

/**
 * JSON logs on stdout. The destination is asynchronous and buffered: one line per request is on the redirect and
 * API hot paths, and a synchronous write per line costs more than the request itself. `flush` runs at shutdown.
 */
export function createLogger(options: { level: string; name: string; destination?: NodeJS.WritableStream }): {
  logger: Logger;
  flush: () => void;
} {
  if (options.destination) {
    const logger = pino({ level: options.level, base: { process: options.name } }, options.destination);
    return { logger, flush: () => undefined };
  }
  const destination = pino.destination({ dest: 1, sync: false, minLength: 16000, maxWrite: 65536 });
  const logger = pino(
    {
      level: options.level,
      base: { process: options.name },
      // Secrets never reach the log, whichever object a caller passes in.
      redact: { paths: ['authorization', 'headers.authorization', 'key', 'secret', 'password'], censor: '[redacted]' },
    },
    destination,
  );
  return { logger, flush: () => destination.flushSync() };
}
