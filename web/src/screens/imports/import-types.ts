// The import jobs of the API (GET /v1/imports/{id}, docs/importing/README.md), as the dashboard reads them.

// The shapes are the API's own (one schema source): the dashboard reads what the router validates and OpenAPI states.
export type { SourceKind } from '../../../../src/imports/source.ts';
export type { ImportStatus, Import as ImportJob, ImportRowError } from '../../../../src/imports/import.schemas.ts';
import type { SourceKind } from '../../../../src/imports/source.ts';
import type { Import as ImportJob } from '../../../../src/imports/import.schemas.ts';

export interface SourceInfo {
  kind: SourceKind;
  label: string;
  /** Reads an uploaded export file instead of calling the service. */
  file: boolean;
  /** Self-hosted: the service's base URL is required. */
  baseUrl: boolean;
  /** Where to get the token, or what the file is. */
  hint: string;
}

/** In the order the form offers them; each has its page under docs/importing/. */
export const SOURCES: SourceInfo[] = [
  { kind: 'bitly', label: 'Bitly', file: false, baseUrl: false, hint: 'A Bitly access token (Settings → API).' },
  { kind: 'dub', label: 'Dub', file: false, baseUrl: false, hint: 'A Dub API key of the workspace to copy.' },
  { kind: 'shlink', label: 'Shlink (REST API)', file: false, baseUrl: true, hint: 'A Shlink API key, and the address of your Shlink server.' },
  { kind: 'shlink_csv', label: 'Shlink (CSV export)', file: true, baseUrl: false, hint: 'The CSV file Shlink exports its short URLs to.' },
  { kind: 'kutt', label: 'Kutt', file: false, baseUrl: true, hint: 'A Kutt API key, and the address of your Kutt server.' },
  { kind: 'yourls', label: 'YOURLS', file: false, baseUrl: true, hint: 'Your YOURLS signature token, and the address of your YOURLS server.' },
  { kind: 'rebrandly', label: 'Rebrandly', file: false, baseUrl: false, hint: 'A Rebrandly API key.' },
  { kind: 'shortio', label: 'Short.io', file: false, baseUrl: false, hint: 'A Short.io secret API key.' },
  { kind: 'csv', label: 'Linkplane CSV', file: true, baseUrl: false, hint: "A Linkplane export (the links list's Export CSV writes one), or any CSV with a url column: slug, title, domain, tags, expires_at and utm_* are read when present." },
];

export function sourceInfo(kind: SourceKind): SourceInfo {
  return SOURCES.find((s) => s.kind === kind)!;
}

export function isRunning(job: ImportJob): boolean {
  return job.status === 'queued' || job.status === 'running';
}
