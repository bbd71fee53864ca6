// Checking what a job hands a remote source before the first request: a token, an optional base URL (an API on
// another host: a proxy, a regional or enterprise endpoint, a test server), and only the per-source params the source
// knows, so a mistyped param is refused rather than silently ignored. Every problem is `input`.
import { SourceError, type SourceKind, type SourceOptions } from '../source.ts';
import { checkParams, tokenOf } from './options.ts';

export interface RemoteOptions {
  token: string;
  /** Without a trailing slash. */
  baseUrl: string;
  params: Record<string, string>;
}

export function remoteOptions(kind: SourceKind, options: SourceOptions, defaultBaseUrl: string, knownParams: readonly string[]): RemoteOptions {
  const token = tokenOf(options, kind, 'an API token');
  const baseUrl = (options.baseUrl ?? defaultBaseUrl).replace(/\/+$/, '');
  if (!URL.canParse(baseUrl) || !['http:', 'https:'].includes(new URL(baseUrl).protocol)) {
    throw new SourceError('input', `${kind}: the base URL ${JSON.stringify(options.baseUrl)} is not an absolute http(s) URL`);
  }
  checkParams(options, kind, knownParams);
  return { token, baseUrl, params: options.params };
}

/** A param that must match `pattern` when given; null when absent or empty. */
export function optionalParam(kind: SourceKind, params: Record<string, string>, name: string, pattern: RegExp, meaning: string): string | null {
  const value = params[name]?.trim() ?? '';
  if (value === '') return null;
  if (!pattern.test(value)) throw new SourceError('input', `${kind}: ${name} ${JSON.stringify(value)} is not ${meaning}`);
  return value;
}
