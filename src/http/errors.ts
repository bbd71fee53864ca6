import type { Logger } from '../platform/logger.ts';
import type { ApiContext } from './context.ts';
import type { ErrorResponder } from './observe.ts';
import { toErrorResponse } from './error-response.ts';

/** Thrown errors as the spec's envelope (part 7), with their status and headers; unexpected ones are logged. */
export function errorEnvelope(logger: Logger, docsBaseUrl: string): ErrorResponder {
  return (ctx: ApiContext, error: unknown) => {
    const response = toErrorResponse(error, docsBaseUrl);
    if (response.unexpected) {
      logger.error({ err: error, req_id: ctx.state.requestId, method: ctx.method, path: ctx.path }, 'unexpected error');
    }
    ctx.status = response.status;
    ctx.body = response.body;
    for (const [name, value] of Object.entries(response.headers)) ctx.set(name, value);
  };
}
