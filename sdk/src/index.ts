// @linkplane/sdk: a typed client of the Linkplane API (docs/sdk.md).
export { Linkplane, Paginator, unwrap, SDK_VERSION } from './client.ts';
export type {
  LinkplaneOptions, CallOptions, Link, LinkCreate, LinkUpdate, LinkListQuery, AnalyticsQuery, AnalyticsSummary, AnalyticsTimeseries,
  AnalyticsTopLinks, Webhook, WebhookCreate, WebhookCreated, ListPath, ListItem, ListParams, Schemas,
} from './client.ts';
export {
  LinkplaneError, AuthenticationError, PermissionError, NotFoundError, ValidationError, ConflictError, QuotaExceededError, RateLimitedError,
  InternalError, LinkplaneConnectionError,
} from './errors.ts';
export type { ErrorBody, ErrorCode, ErrorDetail } from './errors.ts';
export type { RetryEvent } from './transport.ts';
export { verifyWebhook, WebhookVerificationError } from './webhooks.ts';
export type { WebhookEvent, WebhookEventType, WebhookFailure, WebhookHeaders, VerifyWebhookOptions } from './webhooks.ts';
export type { paths, components, operations, webhooks } from './generated/openapi.ts';
