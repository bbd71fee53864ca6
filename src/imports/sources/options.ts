// What a source checks of the options a job hands it before calling anything: the base URL of a self-hosted service,
// a token, and only the extras it knows. A problem here is the user's to fix, so it is an `input` error that names the
// option, raised when the source is built rather than pages into a run.
import { SourceError, type SourceOptions } from '../source.ts';

/**
 * The base URL of a self-hosted service as `origin + path`, without trailing slashes and without the API path users
 * often paste with it (`apiPath`, e.g. /api/v2 for Kutt).
 */
export function baseUrlOf(options: SourceOptions, service: string, apiPath?: RegExp): string {
  const raw = options.baseUrl?.trim();
  if (!raw) throw new SourceError('input', `${service} is self-hosted: give the base URL of your ${service} (for example https://s.example.com)`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new SourceError('input', `the ${service} base URL is not an absolute URL: ${raw}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new SourceError('input', `the ${service} base URL must start with http:// or https://`);
  // Credentials belong in the token; a URL ends up in logs and error messages.
  if (url.username || url.password) throw new SourceError('input', `the ${service} base URL must not carry a user name or password`);
  if (url.search || url.hash) throw new SourceError('input', `the ${service} base URL must not have a query or fragment`);
  let path = url.pathname.replace(/\/+$/, '');
  if (apiPath) path = path.replace(apiPath, '');
  return url.origin + path;
}

/** The token, trimmed; required. */
export function tokenOf(options: SourceOptions, service: string, what: string): string {
  const token = options.token?.trim();
  if (!token) throw new SourceError('input', `${service} needs ${what}`);
  return token;
}

/** Refuses extras the source does not know, so a misspelt one is not silently ignored. */
export function checkParams(options: SourceOptions, service: string, known: readonly string[]): void {
  const unknown = Object.keys(options.params).filter((name) => !known.includes(name));
  if (unknown.length > 0) {
    const accepted = known.length > 0 ? `it takes ${known.join(', ')}` : 'it takes none';
    throw new SourceError('input', `${service} has no option ${unknown.join(', ')} (${accepted})`);
  }
}
