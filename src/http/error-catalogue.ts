// The spec's error table (part 7), one source for the error middleware, the docs page and the OpenAPI document.
import type { ErrorCode } from '../platform/errors.ts';

export interface ErrorEntry {
  readonly status: number;
  readonly otherStatuses?: readonly number[];
  readonly meaning: string;
  readonly retry: string;
}

export const ERROR_CATALOGUE: Readonly<Record<ErrorCode, ErrorEntry>> = {
  unauthorized: {
    status: 401,
    meaning: 'The Authorization header is missing, or the key is unknown, revoked or expired.',
    retry: 'Do not retry with the same key; create or use a valid key.',
  },
  forbidden: {
    status: 403,
    meaning: 'The key is of the wrong kind for the endpoint (workspace vs partner), or the operation is not allowed.',
    retry: 'Do not retry unchanged.',
  },
  insufficient_scope: {
    status: 403,
    meaning: 'The key lacks the scope the endpoint requires; the message names it.',
    retry: 'Use a key that has the scope.',
  },
  plan_restricted: {
    status: 403,
    meaning: "The workspace's plan does not include the capability the request uses; the message names it.",
    retry: 'Upgrade the plan or drop the capability from the request.',
  },
  not_found: {
    status: 404,
    meaning: 'The resource or route does not exist, or belongs to another tenant (indistinguishable by design).',
    retry: 'Do not retry unchanged.',
  },
  invalid_request: {
    status: 400,
    otherStatuses: [405, 406, 408, 413, 431],
    meaning:
      'Malformed JSON, a bad cursor, or a broken business rule (400); a method the path does not support (405, with Allow); an Accept header the tool server cannot answer (406); a request not received within the request timeout (408); a body over the size limit (413); a request head (request line and headers) over 16 KiB (431).',
    retry: 'Fix the request; do not retry unchanged.',
  },
  validation_failed: {
    status: 422,
    meaning: 'The body or query failed schema validation; details lists each field as {path, message}.',
    retry: 'Must not be retried unchanged.',
  },
  conflict: {
    status: 409,
    meaning:
      'A state conflict: a slug or name already taken, or an Idempotency-Key reused with another request (or still in progress).',
    retry: 'Must not be retried unchanged (an in-progress Idempotency-Key may be retried after a pause).',
  },
  quota_exceeded: {
    status: 422,
    meaning: 'A plan quota (links, domains, clients) is exhausted.',
    retry: 'Free capacity or upgrade the plan.',
  },
  rate_limited: {
    status: 429,
    meaning: "Too many requests for this key in the sliding one-minute window; Retry-After says when to retry.",
    retry: 'Retry after the Retry-After seconds, with backoff.',
  },
  not_configured: {
    status: 503,
    meaning: 'The capability is not configured in this environment (for example custom domains without a cluster).',
    retry: 'Not retryable until the operator configures it.',
  },
  internal: {
    status: 500,
    otherStatuses: [502, 504],
    meaning: 'An unexpected platform error; the request id in X-Request-Id helps support find it.',
    retry: 'Retry with exponential backoff; with an Idempotency-Key for mutations.',
  },
  invalid_click_id: {
    status: 422,
    meaning: 'The click_id is forged, tampered with, or was issued in another workspace.',
    retry: 'Do not retry unchanged.',
  },
  attribution_expired: {
    status: 422,
    meaning: "The click is older than the workspace's attribution window.",
    retry: 'Do not retry.',
  },
};

export const ERROR_CODES = Object.keys(ERROR_CATALOGUE) as ErrorCode[];

export function docUrl(docsBaseUrl: string, code: ErrorCode): string {
  return `${docsBaseUrl}/errors#${code}`;
}
