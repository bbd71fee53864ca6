// The errors the SDK throws. Every refusal of the API arrives in one envelope,
// `{ "error": { "code", "message", "doc_url", "details"? } }`; `code` is the stable part clients branch on, so
// the thrown error carries it typed (the union of the codes the OpenAPI document lists) and, for the codes a
// program commonly handles, as a class of its own: `catch (e) { if (e instanceof ValidationError) e.details … }`.
import type { components } from './generated/openapi.ts';

/** The error envelope of the API, as the OpenAPI document declares it. */
export type ErrorBody = components['schemas']['Error'];
/** Every `error.code` the API answers with. */
export type ErrorCode = ErrorBody['error']['code'];
export type ErrorDetail = NonNullable<ErrorBody['error']['details']>[number];

/** A refusal of the API: an HTTP status with the error envelope. */
export class LinkplaneError<C extends ErrorCode = ErrorCode> extends Error {
  /** Stable: branch on it (the message may change between releases). */
  readonly code: C;
  readonly status: number;
  /** On `validation_failed`: one entry per failing field, `{ path, message }`. */
  readonly details: ErrorDetail[];
  /** The documentation of the code. */
  readonly docUrl: string;
  /** The X-Request-Id of the answer: quote it when asking the operator about a failure. */
  readonly requestId: string | null;
  /** The envelope as it came. */
  readonly body: ErrorBody;

  constructor(status: number, body: ErrorBody & { error: { code: C } }, requestId: string | null) {
    super(body.error.message);
    this.name = new.target.name;
    this.code = body.error.code;
    this.status = status;
    this.details = body.error.details ?? [];
    this.docUrl = body.error.doc_url;
    this.requestId = requestId;
    this.body = body;
  }

  /** Narrows the code: `if (error.is('conflict')) …`. */
  is<K extends ErrorCode>(code: K): this is LinkplaneError<K> {
    return (this.code as string) === code;
  }
}

/** 401 `unauthorized`: no key, an unknown, revoked or expired one. */
export class AuthenticationError extends LinkplaneError<'unauthorized'> {}
/** 403 `forbidden`, `insufficient_scope` or `plan_restricted`: the key may not do this. */
export class PermissionError extends LinkplaneError<'forbidden' | 'insufficient_scope' | 'plan_restricted'> {}
/** 404 `not_found`. */
export class NotFoundError extends LinkplaneError<'not_found'> {}
/** 400 `invalid_request` or 422 `validation_failed`; `details` names the fields. */
export class ValidationError extends LinkplaneError<'invalid_request' | 'validation_failed'> {}
/** 409 `conflict`: a slug taken, an Idempotency-Key reused with another request. */
export class ConflictError extends LinkplaneError<'conflict'> {}
/** 403 `quota_exceeded`: the plan's limit is reached. */
export class QuotaExceededError extends LinkplaneError<'quota_exceeded'> {}
/** 429 `rate_limited`, once the retries are spent (or the wait asked for is longer than the client accepts). */
export class RateLimitedError extends LinkplaneError<'rate_limited'> {
  /** Seconds the API asked to wait (Retry-After), when it said. */
  retryAfterSeconds: number | null = null;
}
/** 5xx `internal` (or any answer without the envelope), once the retries are spent. */
export class InternalError extends LinkplaneError<'internal'> {}

type ErrorClass = new (status: number, body: ErrorBody, requestId: string | null) => LinkplaneError;
/** Each class accepts the codes of its type parameter; the map below hands each only those. */
const CLASSES: Partial<Record<ErrorCode, unknown>> = {
  unauthorized: AuthenticationError,
  forbidden: PermissionError,
  insufficient_scope: PermissionError,
  plan_restricted: PermissionError,
  not_found: NotFoundError,
  invalid_request: ValidationError,
  validation_failed: ValidationError,
  conflict: ConflictError,
  quota_exceeded: QuotaExceededError,
  rate_limited: RateLimitedError,
  internal: InternalError,
};

/** The API could not be reached (nothing listening, DNS, TLS, the connection reset) after the retries. */
export class LinkplaneConnectionError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'LinkplaneConnectionError';
  }
}

function isEnvelope(value: unknown): value is ErrorBody {
  const error = (value as { error?: { code?: unknown; message?: unknown } } | null)?.error;
  return typeof error === 'object' && error !== null && typeof error.code === 'string' && typeof error.message === 'string';
}

/** The error for a non-2xx answer and its parsed body (the envelope, or whatever a proxy answered instead). */
export function errorFromResponse(response: Response, body: unknown): LinkplaneError {
  const requestId = response.headers.get('X-Request-Id');
  const envelope: ErrorBody = isEnvelope(body)
    ? body
    : {
        error: {
          code: response.status >= 500 ? 'internal' : 'invalid_request',
          message: `HTTP ${response.status} without the API's error envelope${typeof body === 'string' && body !== '' ? `: ${body.slice(0, 200)}` : ''}`,
          doc_url: '',
        },
      };
  const Class = (CLASSES[envelope.error.code] ?? LinkplaneError) as ErrorClass;
  const error = new Class(response.status, envelope, requestId);
  if (error instanceof RateLimitedError) error.retryAfterSeconds = retryAfterSeconds(response.headers.get('Retry-After'));
  return error;
}

/** Retry-After as seconds: delta-seconds or an HTTP date; null when absent or unreadable. */
export function retryAfterSeconds(value: string | null, now = Date.now()): number | null {
  if (value === null || value.trim() === '') return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - now) / 1000));
}
