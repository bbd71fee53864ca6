// Domain errors: one class per failure, each with the spec's stable code and the facts that explain it.
// Services and stores throw these; only src/http decides what HTTP looks like.

export type ErrorCode =
  | 'unauthorized'
  | 'forbidden'
  | 'insufficient_scope'
  | 'plan_restricted'
  | 'not_found'
  | 'invalid_request'
  | 'validation_failed'
  | 'conflict'
  | 'quota_exceeded'
  | 'rate_limited'
  | 'not_configured'
  | 'internal'
  | 'invalid_click_id'
  | 'attribution_expired';

export interface ErrorDetail {
  path: string;
  message: string;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetail[] | undefined;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown; details?: ErrorDetail[] }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.details = options?.details;
  }
}

export class UnauthorizedError extends AppError {
  constructor(message = 'A valid API key is required: send Authorization: Bearer <key>.') {
    super('unauthorized', message);
  }
}

export class ForbiddenError extends AppError {
  constructor(message: string) {
    super('forbidden', message);
  }
}

export class WrongKeyKindError extends ForbiddenError {
  readonly required: 'workspace' | 'partner';
  constructor(required: 'workspace' | 'partner') {
    super(`This endpoint requires a ${required} key (${required === 'workspace' ? 'lp_live_' : 'lpp_live_'}…).`);
    this.required = required;
  }
}

export class InsufficientScopeError extends AppError {
  readonly scope: string;
  constructor(scope: string) {
    super('insufficient_scope', `This key lacks the scope "${scope}".`);
    this.scope = scope;
  }
}

export class PlanRestrictedError extends AppError {
  readonly capability: string;
  constructor(capability: string, planId: string) {
    super('plan_restricted', `The "${planId}" plan does not include the capability "${capability}".`);
    this.capability = capability;
  }
}

export class NotFoundError extends AppError {
  constructor(what = 'resource') {
    super('not_found', `The ${what} does not exist.`);
  }
}

export class InvalidRequestError extends AppError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('invalid_request', message, options);
  }
}

/** A request the route exists for but whose method it does not support (answered 405 with Allow). */
export class MethodNotAllowedError extends InvalidRequestError {
  readonly allowed: readonly string[];
  constructor(method: string, allowed: readonly string[]) {
    super(`Method ${method} is not allowed here; allowed: ${allowed.join(', ')}.`);
    this.allowed = allowed;
  }
}

/**
 * A request a protocol served by the API refused by its own rules (the tool server's MCP transport: Accept without
 * text/event-stream, a body that is not JSON-RPC, an unsupported protocol version), answered with that protocol's
 * HTTP status (406, 415, 400, ...).
 */
export class ProtocolRefusalError extends InvalidRequestError {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

/** A body over the configured size (answered 413). */
export class PayloadTooLargeError extends InvalidRequestError {
  readonly limitBytes: number;
  constructor(limitBytes: number) {
    super(`The request body exceeds ${limitBytes} bytes.`);
    this.limitBytes = limitBytes;
  }
}

export class ValidationError extends AppError {
  constructor(details: ErrorDetail[], message = 'The request failed validation; see details.') {
    super('validation_failed', message, { details });
  }
}

export class ConflictError extends AppError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('conflict', message, options);
  }
}

export class IdempotencyKeyReusedError extends ConflictError {
  constructor() {
    super('This Idempotency-Key was already used with a different request.');
  }
}

export class IdempotencyInProgressError extends ConflictError {
  constructor() {
    super('A request with this Idempotency-Key is still being processed; retry later.');
  }
}

export class QuotaExceededError extends AppError {
  readonly quota: string;
  readonly limit: number;
  constructor(quota: string, limit: number) {
    super('quota_exceeded', `The plan's ${quota} quota (${limit}) is exhausted.`);
    this.quota = quota;
    this.limit = limit;
  }
}

export class RateLimitedError extends AppError {
  readonly retryAfterSeconds: number;
  constructor(retryAfterSeconds: number) {
    super('rate_limited', `Too many requests for this key; retry in ${retryAfterSeconds} s.`);
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** A platform dependency (the Kubernetes API, say) failed or refused: `internal`, answered 502 (spec part 7). */
export class UpstreamError extends AppError {
  readonly dependency: string;
  constructor(dependency: string, message: string, cause: unknown) {
    super('internal', message, { cause });
    this.dependency = dependency;
  }
}

export class NotConfiguredError extends AppError {
  constructor(capability: string) {
    super('not_configured', `${capability} is not configured in this environment.`);
  }
}

export class DuplicateKeyError extends ConflictError {
  readonly keyValue: Record<string, unknown> | undefined;
  constructor(message: string, keyValue: Record<string, unknown> | undefined, cause: unknown) {
    super(message, { cause });
    this.keyValue = keyValue;
  }
}

/** Stores call this on driver errors so a unique-index violation becomes a conflict, never an internal error. */
export function isDuplicateKey(error: unknown): error is { code: 11000; keyValue?: Record<string, unknown> } {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 11000;
}

/** A click id that was not issued by us for this workspace: forged, tampered with, or another workspace's. */
export class InvalidClickIdError extends AppError {
  constructor() {
    super('invalid_click_id', 'The click_id is not valid for this workspace (forged, altered, or issued by another workspace).');
  }
}

export class AttributionExpiredError extends AppError {
  readonly windowDays: number;
  constructor(windowDays: number) {
    super('attribution_expired', `The click is older than the workspace's attribution window (${windowDays} days) at the conversion's occurred_at.`);
    this.windowDays = windowDays;
  }
}

/**
 * A genuine click id whose click the ingestion has not written yet (the click pipeline is behind): `internal`,
 * answered 504 with Retry-After; the retry (with the same external_id or Idempotency-Key) records it once.
 */
export class ClickPendingError extends AppError {
  readonly retryAfterSeconds: number;
  constructor(retryAfterSeconds: number) {
    super('internal', `The click is not recorded yet; retry in ${retryAfterSeconds} s.`);
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** Sign-in and session failures of the dashboard (`/auth/*`): one answer for an unknown user and a wrong password. */
export class SignInFailedError extends UnauthorizedError {
  constructor() {
    super('The e-mail or password is not correct.');
  }
}

/** A sign-in link that is unknown, already used or expired: the person asks for a new one. */
export class SignInLinkExpiredError extends UnauthorizedError {
  constructor() {
    super('This sign-in link has expired or was already used: ask for a new one.');
  }
}

export class NoSessionError extends UnauthorizedError {
  constructor() {
    super('Not signed in, or the session has ended: sign in again.');
  }
}

/** A state-changing request authenticated by the session cookie without the session's CSRF token or from another origin. */
export class CsrfError extends ForbiddenError {
  constructor(reason: string) {
    super(`CSRF check failed: ${reason}.`);
  }
}

/** "22:04 UTC": when a wait of `seconds` from `now` ends, to the minute (rounded up, never before it ends). */
export function liftsAt(now: number, seconds: number): string {
  const at = new Date(Math.ceil((now + seconds * 1000) / 60_000) * 60_000);
  return `${at.toISOString().slice(11, 16)} UTC`;
}

/** Every export slot of the workspace is taken (ExportSlots): 429 with the seconds until one may free up. */
export class ExportsBusyError extends RateLimitedError {
  constructor(what: string, perWorkspace: number, retryAfterSeconds: number) {
    super(retryAfterSeconds);
    this.message = `${perWorkspace} ${what} of this workspace are running already, the most at once; retry in ${retryAfterSeconds} s.`;
  }
}

export class SignInRateLimitedError extends RateLimitedError {
  /** `scope` says which limit: "for this account from this address", "from this address", "for this account". */
  constructor(retryAfterSeconds: number, scope = '', now = Date.now()) {
    super(retryAfterSeconds);
    this.message = `Too many sign-in attempts${scope ? ` ${scope}` : ''}; try again at ${liftsAt(now, retryAfterSeconds)}.`;
  }
}

export class PasswordResetRateLimitedError extends RateLimitedError {
  constructor(retryAfterSeconds: number, now = Date.now()) {
    super(retryAfterSeconds);
    this.message = `Too many password reset requests from this address; try again at ${liftsAt(now, retryAfterSeconds)}.`;
  }
}

export class PasswordResetExpiredError extends UnauthorizedError {
  constructor() {
    super('This password reset link has expired or was already used: ask for a new one.');
  }
}
