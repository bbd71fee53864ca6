import {
  AppError,
  MethodNotAllowedError,
  PayloadTooLargeError, UpstreamError,
  ProtocolRefusalError,
  ClickPendingError,
  RateLimitedError,
  type ErrorCode,
  type ErrorDetail,
} from '../platform/errors.ts';
import { Type, type Static } from '@sinclair/typebox';
import { ERROR_CATALOGUE, ERROR_CODES, docUrl } from './error-catalogue.ts';

/** The error envelope of spec part 7, declared once: its type here, and the OpenAPI document's `Error`. */
export const ErrorSchema = Type.Object(
  {
    error: Type.Object(
      {
        code: Type.Unsafe<ErrorCode>({ type: 'string', enum: ERROR_CODES, description: 'Stable: clients branch on it' }),
        message: Type.String({ description: 'For humans; may change between releases' }),
        doc_url: Type.String({ format: 'uri', description: 'Documentation of the code' }),
        details: Type.Optional(
          Type.Array(
            Type.Object(
              { path: Type.String({ description: 'The field, as `targeting[0].match.country`' }), message: Type.String() },
              { additionalProperties: false },
            ),
            { description: 'On validation_failed: one entry per failing field' },
          ),
        ),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false, $id: 'Error' },
);

export type ErrorBody = Static<typeof ErrorSchema>;

export interface ErrorResponse {
  status: number;
  body: ErrorBody;
  headers: Record<string, string>;
  /** Unexpected errors are logged with their stack; expected ones are part of normal traffic. */
  unexpected: boolean;
}

/** The spec's envelope (part 7) for any thrown value; unknown errors become `internal` with a generic message. */
export function toErrorResponse(error: unknown, docsBaseUrl: string): ErrorResponse {
  if (!(error instanceof AppError)) {
    const status = httpStatusOf(error);
    // Errors raised by Koa or Node for a client mistake (a bad URI, a closed body) are the client's, not ours.
    if (status !== undefined && status >= 400 && status < 500) {
      const code: ErrorCode = status === 404 ? 'not_found' : 'invalid_request';
      return envelope(code, status, (error as Error).message || 'Bad request.', undefined, {}, docsBaseUrl, false);
    }
    return envelope('internal', 500, 'An unexpected error occurred.', undefined, {}, docsBaseUrl, true);
  }
  const headers: Record<string, string> = {};
  let status = ERROR_CATALOGUE[error.code].status;
  if (error instanceof RateLimitedError) headers['Retry-After'] = String(error.retryAfterSeconds);
  if (error instanceof MethodNotAllowedError) {
    status = 405;
    headers.Allow = error.allowed.join(', ');
  }
  if (error instanceof PayloadTooLargeError) status = 413;
  if (error instanceof ProtocolRefusalError) status = error.status;
  if (error instanceof UpstreamError) status = 502;
  if (error instanceof ClickPendingError) {
    status = 504;
    headers['Retry-After'] = String(error.retryAfterSeconds);
  }
  return envelope(error.code, status, error.message, error.details, headers, docsBaseUrl, status >= 500 && error.code === 'internal');
}

function envelope(
  code: ErrorCode,
  status: number,
  message: string,
  details: ErrorDetail[] | undefined,
  headers: Record<string, string>,
  docsBaseUrl: string,
  unexpected: boolean,
): ErrorResponse {
  const body: ErrorBody = { error: { code, message, doc_url: docUrl(docsBaseUrl, code) } };
  if (details) body.error.details = details;
  return { status, body, headers, unexpected };
}

function httpStatusOf(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { status, statusCode, expose } = error as { status?: unknown; statusCode?: unknown; expose?: unknown };
  const value = typeof status === 'number' ? status : typeof statusCode === 'number' ? statusCode : undefined;
  return value !== undefined && expose !== false ? value : undefined;
}

const TRANSPORT_MESSAGES: Record<number, string> = {
  408: 'The request was not received in time.',
  413: 'A chunk extension of the request body is too large.',
  431: 'The request head (request line and headers) is over 16 KiB.',
};

/** The envelope for a request Node's HTTP parser refused before any middleware ran (http-server.ts). */
export function transportErrorBody(status: number, docsBaseUrl: string): ErrorBody {
  return envelope('invalid_request', status, TRANSPORT_MESSAGES[status] ?? 'The request is not valid HTTP.', undefined, {}, docsBaseUrl, false).body;
}
