import type { EventEmitter } from 'node:events';
import { pino, type Logger } from 'pino';

export type { Logger };

/** One line per request: id, method, route template, status, duration. */
export type AccessLog = (requestId: string, method: string, route: string, status: number, ms: number) => void;

interface Writable {
  write(chunk: string): unknown;
}

const LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];

/** How often lines held by the destination are handed to stdout, whatever their number. */
const FLUSH_INTERVAL_MS = 250;
const WARN = 40;

/**
 * JSON logs on stdout. The destination is asynchronous and written in large chunks: the request line is on the
 * api and redirect hot paths, and a write per line, or pino's generic serialiser, costs a good part of a request.
 * What it holds goes out within FLUSH_INTERVAL_MS, and at once after a warning or an error, so an operator watching
 * an outage sees it as it happens, and a process killed outright (SIGKILL, OOM) leaves its last warnings behind.
 * The request line is therefore written directly, in pino's own format (level 30, `time`, `process`, `msg`), so
 * every line of the stream still parses the same way.
 *
 * Nothing here ever waits on stdout: while nobody reads it, at most `bufferMaxBytes` are held and further lines are
 * dropped and counted (`droppedLines`, the `linkplane_log_lines_dropped_total` metric); `flush` at shutdown gives up after its
 * timeout, dropping (and counting) what is left. A synchronous flush would block the process for as long as the
 * reader does not read, SIGTERM included.
 */
export function createLogger(options: { level: string; name: string; destination?: NodeJS.WritableStream; bufferMaxBytes?: number }): {
  logger: Logger;
  access: AccessLog;
  flush: (timeoutMs: number) => Promise<void>;
  droppedLines: () => number;
} {
  const settings = {
    level: options.level,
    base: { process: options.name },
    // Secrets never reach the log, whichever object a caller passes in.
    redact: { paths: ['authorization', 'headers.authorization', 'key', 'secret', 'password'], censor: '[redacted]' },
  };
  let dropped = 0;
  const destination =
    options.destination ??
    pino.destination({ dest: 1, sync: false, minLength: 16_000, maxWrite: 65_536, maxLength: options.bufferMaxBytes ?? 8 * 1_048_576 });
  (destination as Partial<EventEmitter>).on?.('drop', (data: string) => (dropped += lineCount(data)));
  const requests = LEVELS.indexOf(options.level) <= LEVELS.indexOf('info') ? accessLog(destination, options.name) : null;
  const handOver = () => {
    requests?.handOver();
    handOverHeld(destination);
  };
  const logger = pino(
    {
      ...settings,
      hooks: {
        logMethod(args: Parameters<Logger['info']>, method: (...a: Parameters<Logger['info']>) => void, level: number) {
          // Request lines gathered this turn go first: the stream stays in the order things happened.
          requests?.handOver();
          method.apply(this, args);
          if (level >= WARN) handOver();
        },
      },
    },
    destination,
  );
  const interval = setInterval(handOver, FLUSH_INTERVAL_MS).unref();
  const access: AccessLog = requests?.access ?? (() => undefined);
  const flush = (timeoutMs: number) => {
    clearInterval(interval);
    requests?.handOver();
    return flushWithin(destination, timeoutMs, (lines) => (dropped += lines));
  };
  return { logger, access, flush, droppedLines: () => dropped };
}

/** Starts writing what the destination holds (asynchronously: never waits on stdout); nothing held, nothing done. */
function handOverHeld(destination: Flushable): void {
  if (typeof destination.flush !== 'function' || destination.destroyed || (destination._bufs?.length ?? 0) === 0) return;
  try {
    destination.flush();
  } catch {
    // Not open yet, or closed: the next interval tries again.
  }
}

interface Flushable {
  flush?: (callback?: (error?: Error) => void) => void;
  destroyed?: boolean;
  destroy?: () => void;
  write?: (chunk: string) => boolean;
  /** SonicBoom's pending chunks (internal, read only to count what is dropped at exit). */
  _bufs?: unknown[];
  _writingBuf?: unknown;
}

/** Resolves once the destination has written what it holds, or after `timeoutMs` with the rest counted as dropped. */
function flushWithin(destination: Flushable, timeoutMs: number, onDropped: (lines: number) => void): Promise<void> {
  if (typeof destination.flush !== 'function') return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      const pending = [destination._writingBuf, ...(destination._bufs ?? [])];
      onDropped(pending.reduce<number>((n, chunk) => n + (typeof chunk === 'string' || Buffer.isBuffer(chunk) ? lineCount(String(chunk)) : 0), 0));
      // Given up: later lines are dropped and counted too, and the destination is marked destroyed, which also stops
      // pino's exit hook from flushing it synchronously (a write to a full pipe that would never return).
      destination.write = (chunk: string) => {
        onDropped(lineCount(chunk));
        return true;
      };
      destination.destroy?.();
      resolve();
    }, timeoutMs);
    timer.unref();
    try {
      destination.flush!(() => {
        clearTimeout(timer);
        resolve();
      });
    } catch {
      // Not open yet, or already closed: nothing more can be written.
      clearTimeout(timer);
      resolve();
    }
  });
}

function lineCount(text: string): number {
  let lines = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) lines++;
  return lines;
}

function accessLog(stream: Writable, processName: string): { access: AccessLog; handOver: () => void } {
  const middle = `,"process":${JSON.stringify(processName)},"req_id":"`;
  // The lines of one event-loop turn go to the destination as one chunk: SonicBoom measures the bytes of its last
  // held chunk (up to maxWrite) on every write, so a write per request cost more than building the line.
  let held = '';
  let scheduled = false;
  const handOver = () => {
    scheduled = false;
    if (held === '') return;
    const chunk = held;
    held = '';
    stream.write(chunk);
  };
  // The request id is either ours or matched /^[A-Za-z0-9._:-]+$/, and Node only accepts token characters in a
  // method, so neither needs escaping; the route can hold anything the client sent when no route matched.
  const access: AccessLog = (requestId, method, route, status, ms) => {
    held += `{"level":30,"time":${Date.now()}${middle}${requestId}","method":"${method}","route":${JSON.stringify(route)},"status":${status},"ms":${ms},"msg":"request"}\n`;
    if (held.length >= HELD_REQUEST_LINES_MAX) handOver();
    else if (!scheduled) {
      scheduled = true;
      setImmediate(handOver);
    }
  };
  return { access, handOver };
}

/** Characters of request lines gathered before they go to the destination without waiting for the turn's end. */
const HELD_REQUEST_LINES_MAX = 16_384;
