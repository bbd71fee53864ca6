// What every import source gives the import job: the links of an outside account (Bitly, Dub, Shlink, Kutt, YOURLS,
// Rebrandly, Short.io) or of an export file (ours, Shlink's), a page at a time, already in our words. A source knows
// its service's API (paths, pagination, authentication, rate limits) and nothing of ours beyond this file; the job
// (its store, the worker loop, the batched link writes) knows nothing of any service.
import type { LinkCreate, Utm } from '../links/link.schemas.ts';
import type { TargetingEntry } from '../rules/rule.schemas.ts';

/** The services and file formats an import job can read. */
export const SOURCE_KINDS = ['bitly', 'dub', 'shlink', 'shlink_csv', 'kutt', 'yourls', 'rebrandly', 'shortio', 'csv'] as const;
export type SourceKind = (typeof SOURCE_KINDS)[number];

/** One link as the source has it, mapped field by field to ours; what the source cannot give is null (or empty). */
export interface ImportedLink {
  /**
   * The source's own id of the link (Bitly's bitlink id, Dub's link id, YOURLS's keyword, a CSV row's id column...):
   * stable across runs, so running the same import again creates nothing twice.
   */
  sourceId: string;
  /** Destination, absolute http(s) URL, as the source stores it. */
  url: string;
  /** Host name of the short link at the source (`bit.ly`, `go.example.com`); null where the source has no domains. */
  domain: string | null;
  /** The short link's path at the source; null where it has none we can keep. */
  slug: string | null;
  title: string | null;
  /** Tag names (not ids); empty when none. */
  tags: string[];
  createdAt: Date | null;
  expiresAt: Date | null;
  /** Where an expired link sends visitors, if the source has it. */
  expiredUrl: string | null;
  /** In clear text, only where the source exports it (never guessed). */
  password: string | null;
  /** UTM parameters the source keeps apart from the URL; null when it keeps none. */
  utm: Utm | null;
  /** Device, OS or geo targeting, in our entry shape; empty when the source has none. */
  targeting: TargetingEntry[];
  /** iOS / Android destinations where the source has them (mapped to our `mobile` block by the job). */
  ios: string | null;
  android: string | null;
  /** Total clicks the source reports for the link: imported as a historical total, never as raw clicks. */
  clicksTotal: number | null;
  /**
   * What the link has at the source that it will not have here (a start date, a visit cap, a redirect rule on a
   * condition we do not match on, a password the source never gives out), one sentence each, for the job to show
   * beside the imported link; absent or empty when nothing is lost.
   */
  warnings?: string[];
  /** Fields only our own export has (note, redirect type, A/B test, rules, mobile, rotator, preview), carried over as they are. */
  native?: NativeFields;
}

export type NativeFields = Partial<Pick<LinkCreate, 'note' | 'redirect_type' | 'ab_test' | 'rules' | 'workspace_rules_off' | 'mobile' | 'rotator' | 'preview'>>;

/** A row the source could not map (a bad URL in a CSV, a link the API answered without a destination...). */
export interface SourceRowError {
  /** Where the row was: the source id when known, else `row <n>` of a file. */
  ref: string;
  message: string;
}

export interface SourcePage {
  links: ImportedLink[];
  errors: SourceRowError[];
  /**
   * Opaque cursor of the next page, stored by the job after the page is written; null when this was the last page.
   * Calling `page(next)` again after a restart must give the same next page (no skipped, no repeated rows).
   */
  next: string | null;
  /** Total rows the source reports having, when it says (for the progress bar); null when unknown. */
  total: number | null;
}

/** One GET/POST to a service, through the platform's guarded outbound client (SSRF-checked, time and size bounded). */
export interface SourceHttpRequest {
  method: 'GET' | 'POST';
  url: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface SourceHttpAnswer {
  status: number;
  /** Lowercase names. */
  headers: Record<string, string>;
  body: string;
}

export type SourceHttp = (request: SourceHttpRequest, signal: AbortSignal) => Promise<SourceHttpAnswer>;

/** Why a source stopped: the job records it and fails (bad token, unknown account) or retries later (network). */
export class SourceError extends Error {
  /** `auth`: credentials refused; `input`: the file or the options cannot be read; `remote`: the service failed. */
  readonly kind: 'auth' | 'input' | 'remote';
  constructor(kind: 'auth' | 'input' | 'remote', message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.kind = kind;
  }
}

/** What a job hands a source when it builds one. */
export interface SourceOptions {
  /** API token or key (Bitly's access token, Dub's API key, YOURLS's signature...); null for files. */
  token: string | null;
  /** Base URL of a self-hosted service (Shlink, Kutt, YOURLS), or of an API on another host; null for the default. */
  baseUrl: string | null;
  /** Per-source extras (Bitly's group guid, Rebrandly's workspace, Short.io's domain id...), validated by the source. */
  params: Record<string, string>;
  /** The uploaded file's text, for file sources. */
  file: string | null;
}

export interface SourceDeps {
  http: SourceHttp;
  /** Waits before a retry (a 429's Retry-After, backoff); tests pass one that records and returns at once. */
  sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  /** The clock a source reads a rate limit's reset time against (a service whose limit resets on the minute); `Date.now` when absent. */
  now?: () => number;
}

export interface ImportSource {
  readonly kind: SourceKind;
  /** Reads the page that starts at `cursor` (null: the first), honouring the service's rate limits with backoff. */
  page(cursor: string | null, signal: AbortSignal): Promise<SourcePage>;
}
