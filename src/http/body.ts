import type { Next } from 'koa';
import { InvalidRequestError, PayloadTooLargeError } from '../platform/errors.ts';
import type { ApiContext } from './context.ts';
import { JsonTooDeepError, jsonTextTooDeep } from './json-depth.ts';

const WITH_BODY = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

/**
 * Reads and parses JSON bodies up to `limitBytes`. The raw bytes are kept: idempotency fingerprints them. A body
 * over the limit is refused from its Content-Length when declared, else as soon as the stream passes the limit.
 */
export function jsonBody(limitBytes: number) {
  return function jsonBodyIfAny(ctx: ApiContext, next: Next): Promise<void> {
    return WITH_BODY.has(ctx.method) ? parseJsonBody(ctx, next) : (next() as Promise<void>);
  };

  async function parseJsonBody(ctx: ApiContext, next: Next): Promise<void> {
    const declared = Number(ctx.get('Content-Length') || '0');
    if (declared > limitBytes) {
      // Answer without reading: the connection is closed after the response so the rest is never consumed.
      ctx.set('Connection', 'close');
      throw new PayloadTooLargeError(limitBytes);
    }
    const raw = await readRaw(ctx, limitBytes);
    ctx.state.rawBody = raw;
    if (raw.length === 0) {
      await next();
      return;
    }
    if (!JSON_TYPE.test(ctx.get('Content-Type'))) {
      throw new InvalidRequestError('The request body must be JSON, sent with Content-Type: application/json.');
    }
    const text = raw.toString('utf8');
    // Refused from the text, so a deep body is never built as a value at all.
    if (jsonTextTooDeep(text)) throw new JsonTooDeepError();
    try {
      (ctx.request as { body?: unknown }).body = JSON.parse(text);
    } catch (error) {
      throw new InvalidRequestError(`The request body is not valid JSON: ${(error as Error).message}`);
    }
    await next();
  }
}

function readRaw(ctx: ApiContext, limitBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const req = ctx.req;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limitBytes) {
        cleanup();
        req.resume();
        ctx.set('Connection', 'close');
        reject(new PayloadTooLargeError(limitBytes));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(Buffer.concat(chunks, size));
    };
    const onError = (error: Error) => {
      cleanup();
      reject(new InvalidRequestError('The request body could not be read.', { cause: error }));
    };
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
  });
}

export function bodyOf(ctx: ApiContext): unknown {
  return (ctx.request as { body?: unknown }).body;
}
