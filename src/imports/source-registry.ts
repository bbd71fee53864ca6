// Which reader reads each source kind, and which host names of a service are its own shared short domains (every
// account's links live on them, so they cannot become a custom domain here: links on them go on our default domain).
import type { ImportSource, SourceDeps, SourceKind, SourceOptions } from './source.ts';
import { createBitlySource } from './sources/bitly.ts';
import { createDubSource } from './sources/dub.ts';
import { createKuttSource } from './sources/kutt.ts';
import { createRebrandlySource } from './sources/rebrandly.ts';
import { createShlinkCsvSource } from './sources/shlink-csv.ts';
import { createShlinkSource } from './sources/shlink.ts';
import { createShortioSource } from './sources/shortio.ts';
import { createYourlsSource } from './sources/yourls.ts';

export type SourceFactory = (options: SourceOptions, deps: SourceDeps) => ImportSource;

/** Readers by kind; a kind without one (our own CSV until its reader lands) is refused when a job is created. */
export const SOURCE_FACTORIES: Partial<Record<SourceKind, SourceFactory>> = {
  bitly: createBitlySource,
  dub: createDubSource,
  shlink: createShlinkSource,
  shlink_csv: createShlinkCsvSource,
  kutt: createKuttSource,
  yourls: createYourlsSource,
  rebrandly: createRebrandlySource,
  shortio: createShortioSource,
};

/**
 * The services' shared short domains (from their documentation of default domains). Self-hosted services (Shlink,
 * Kutt, YOURLS) have none: every domain there is the user's own.
 */
const SHARED_HOSTS: Partial<Record<SourceKind, readonly string[]>> = {
  bitly: ['bit.ly', 'j.mp', 'bitly.com'],
  dub: ['dub.sh', 'dub.link', 'chatg.pt', 'amzn.id', 'ggl.link', 'spti.fi', 'git.new', 'cal.link', 'fig.page', 'loooooooo.ng'],
  rebrandly: ['rebrand.ly', 'rebrandly.me', 'rb.gy'],
  shortio: ['short.gy'],
};

/** True when `host` is one of the source service's shared domains (or a subdomain of one, as Short.io's `*.short.gy`). */
export function isSharedHost(kind: SourceKind, host: string): boolean {
  const name = host.toLowerCase();
  return (SHARED_HOSTS[kind] ?? []).some((shared) => name === shared || name.endsWith(`.${shared}`));
}
