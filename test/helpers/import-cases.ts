// The import cases every source must show, shared by the API run (imports-run.test.ts) and the command line
// (imports-cli.test.ts): for each of the seven services and for our own CSV, a small account with a link holding tags,
// on a custom domain, with an expiry, and a link whose slug is already taken here. Each service's test server follows
// its public reference (see test/helpers/import-servers/*.ts). Where a source cannot give one of these, `lacks` says
// so and the tests check it is absent rather than invented.
import { expect } from 'chai';
import Papa from 'papaparse';
import { LINK_EXPORT_COLUMNS, LINK_EXPORT_UNPARSE } from '../../src/links/link.export.ts';
import { startBitlyServer } from './import-servers/bitly.ts';
import { startDubServer } from './import-servers/dub.ts';
import { startRebrandlyServer } from './import-servers/rebrandly.ts';
import { startShortioServer } from './import-servers/shortio.ts';
import { shlinkExportCsv, startShlinkServer, type ShlinkShortUrlFixture } from './import-servers/shlink.ts';
import { startKuttServer } from './import-servers/kutt.ts';
import { startYourlsServer } from './import-servers/yourls.ts';

export const SHORT_HOST = 'lnk.imports.test';
export const TOKEN = 'service-token-1';
export const EXPIRY = '2027-03-01T00:00:00.000Z';
export const DEST = 'https://shop.example.com/spring';

/** What the test keeps of a service's test server: a way to close it. */
export interface ServiceServer {
  close(): Promise<void>;
}

export interface Link {
  id: string;
  domain: string;
  slug: string;
  url: string;
  title: string | null;
  tags: Array<{ name: string }>;
  expires_at: string | null;
}

export interface Job {
  id: string;
  status: string;
  total: number | null;
  done: number;
  created: number;
  skipped: number;
  failed: number;
  error: { code: string; message: string } | null;
}

/** One source: its server, the job body, and what the import must show. */
export interface ImportCase {
  source: string;
  /** The host the import connects (null: the source has one host only, connected beforehand). */
  newHost: string | null;
  /** A host connected (and active) before the import, holding the clashing slug; null: the clash is on our default domain. */
  oldHost: string | null;
  clashSlug: string;
  tags: string[];
  expiry: boolean;
  /** What the source cannot give us among tags, a custom domain and an expiry, and why (asserted as absent). */
  lacks: string[];
  /** Rows the source gives in all (the clash included). */
  rows: number;
  start(): Promise<{ server: ServiceServer | null; body: Record<string, unknown> }>;
}

const shlinkUrls = (host: string, old: string): ShlinkShortUrlFixture[] => [
  { shortCode: 'launch', longUrl: DEST, dateCreated: '2025-03-01T09:30:00+00:00', domain: host, title: 'Spring launch', tags: ['campaign', 'spring'], validUntil: '2027-03-01T00:00:00+00:00' },
  { shortCode: 'plain', longUrl: 'https://example.com/plain', dateCreated: '2025-03-02T09:30:00+00:00', domain: host },
  { shortCode: 'taken', longUrl: 'https://example.com/clash', dateCreated: '2025-03-03T09:30:00+00:00', domain: old },
];

export const IMPORT_CASES: ImportCase[] = [
  {
    source: 'bitly',
    lacks: [],
    newHost: 'go.bitly-import.com',
    oldHost: null,
    clashSlug: 'taken-bitly',
    tags: ['campaign', 'spring'],
    expiry: true,
    rows: 3,
    async start() {
      const server = await startBitlyServer({
        token: TOKEN,
        links: [
          { id: 'bit.ly/3launch', long_url: DEST, title: 'Spring launch', tags: ['campaign', 'spring'], created_at: '2025-03-01T09:30:00+0000', expiration_at: '2027-03-01T00:00:00+0000', custom_bitlinks: ['https://go.bitly-import.com/launch'] },
          { id: 'bit.ly/taken-bitly', long_url: 'https://example.com/clash', created_at: '2025-03-02T09:30:00+0000' },
        ],
      });
      return { server, body: { source: 'bitly', token: TOKEN, base_url: server.url } };
    },
  },
  {
    source: 'dub',
    lacks: [],
    newHost: 'go.dub-import.com',
    oldHost: null,
    clashSlug: 'taken-dub',
    tags: ['campaign', 'spring'],
    expiry: true,
    rows: 3,
    async start() {
      const server = await startDubServer({
        token: TOKEN,
        links: [
          { id: 'link_1', domain: 'go.dub-import.com', key: 'launch', url: DEST, title: 'Spring launch', tags: ['campaign', 'spring'], expiresAt: EXPIRY, createdAt: '2025-03-01T09:30:00.000Z' },
          { id: 'link_2', domain: 'go.dub-import.com', key: 'plain', url: 'https://example.com/plain', createdAt: '2025-03-02T09:30:00.000Z' },
          { id: 'link_3', domain: 'dub.sh', key: 'taken-dub', url: 'https://example.com/clash', createdAt: '2025-03-03T09:30:00.000Z' },
        ],
      });
      return { server, body: { source: 'dub', token: TOKEN, base_url: server.url } };
    },
  },
  {
    source: 'rebrandly',
    lacks: ['expiry: Rebrandly\'s API has no expiry on a link'],
    newHost: 'go.rebrandly-import.com',
    oldHost: null,
    clashSlug: 'taken-rebrandly',
    tags: ['campaign', 'spring'],
    expiry: false,
    rows: 3,
    async start() {
      const server = await startRebrandlyServer({
        token: TOKEN,
        links: [
          { slashtag: 'launch', destination: DEST, title: 'Spring launch', domain: 'go.rebrandly-import.com', tags: ['campaign', 'spring'], createdAt: '2025-03-01T09:30:00.000Z' },
          { slashtag: 'plain', destination: 'https://example.com/plain', domain: 'go.rebrandly-import.com', createdAt: '2025-03-02T09:30:00.000Z' },
          { slashtag: 'taken-rebrandly', destination: 'https://example.com/clash', domain: 'rebrand.ly', createdAt: '2025-03-03T09:30:00.000Z' },
        ],
      });
      return { server, body: { source: 'rebrandly', token: TOKEN, base_url: server.url } };
    },
  },
  {
    source: 'shortio',
    lacks: [],
    newHost: 'go.shortio-import.com',
    oldHost: null,
    clashSlug: 'taken-shortio',
    tags: ['campaign', 'spring'],
    expiry: true,
    rows: 3,
    async start() {
      const server = await startShortioServer({
        token: TOKEN,
        domains: ['go.shortio-import.com', 'acme.short.gy'],
        links: [
          { domain: 'go.shortio-import.com', path: 'launch', originalURL: DEST, title: 'Spring launch', tags: ['campaign', 'spring'], expiresAt: EXPIRY, createdAt: '2025-03-01T09:30:00.000Z' },
          { domain: 'go.shortio-import.com', path: 'plain', originalURL: 'https://example.com/plain', createdAt: '2025-03-02T09:30:00.000Z' },
          { domain: 'acme.short.gy', path: 'taken-shortio', originalURL: 'https://example.com/clash', createdAt: '2025-03-03T09:30:00.000Z' },
        ],
      });
      return { server, body: { source: 'shortio', token: TOKEN, base_url: server.url } };
    },
  },
  {
    source: 'shlink',
    lacks: [],
    newHost: 'go.shlink-import.com',
    oldHost: 'old.shlink-import.com',
    clashSlug: 'taken',
    tags: ['campaign', 'spring'],
    expiry: true,
    rows: 3,
    async start() {
      const server = await startShlinkServer({ apiKey: TOKEN, shortUrls: shlinkUrls('go.shlink-import.com', 'old.shlink-import.com') });
      return { server, body: { source: 'shlink', token: TOKEN, base_url: server.url } };
    },
  },
  {
    source: 'shlink_csv',
    lacks: ['expiry: the web client\'s CSV export has no validUntil column'],
    newHost: 'go.shlink-csv-import.com',
    oldHost: 'old.shlink-csv-import.com',
    clashSlug: 'taken',
    tags: ['campaign', 'spring'],
    expiry: false,
    rows: 3,
    start() {
      return Promise.resolve({ server: null, body: { source: 'shlink_csv', file: shlinkExportCsv(shlinkUrls('go.shlink-csv-import.com', 'old.shlink-csv-import.com')) } });
    },
  },
  {
    source: 'kutt',
    lacks: ['tags: Kutt has no tags'],
    newHost: 'go.kutt-import.com',
    oldHost: 'old.kutt-import.com',
    clashSlug: 'taken',
    tags: [],
    expiry: true,
    rows: 3,
    async start() {
      const server = await startKuttServer({
        apiKey: TOKEN,
        links: [
          { address: 'launch', target: DEST, description: 'Spring launch', domain: 'go.kutt-import.com', expireIn: EXPIRY, createdAt: '2025-03-01T09:30:00.000Z' },
          { address: 'plain', target: 'https://example.com/plain', domain: 'go.kutt-import.com', createdAt: '2025-03-02T09:30:00.000Z' },
          { address: 'taken', target: 'https://example.com/clash', domain: 'old.kutt-import.com', createdAt: '2025-03-03T09:30:00.000Z' },
        ],
      });
      return { server, body: { source: 'kutt', token: TOKEN, base_url: server.url } };
    },
  },
  {
    source: 'yourls',
    lacks: ['tags and expiry: YOURLS has neither', 'a domain per link: an instance serves one host, its own, connected here before the import (the clash is on it)'],
    newHost: null,
    oldHost: 'old.yourls-import.com',
    clashSlug: 'taken',
    tags: [],
    expiry: false,
    rows: 3,
    async start() {
      const user = { username: 'admin', password: 'correct horse', signature: '1002a612b4' };
      const server = await startYourlsServer({
        users: [user],
        site: 'https://old.yourls-import.com',
        links: [
          { keyword: 'launch', url: DEST, title: 'Spring launch', timestamp: '2025-03-01 09:30:00', clicks: 12 },
          { keyword: 'plain', url: 'https://example.com/plain', timestamp: '2025-03-02 09:30:00' },
          { keyword: 'taken', url: 'https://example.com/clash', timestamp: '2025-03-03 09:30:00' },
        ],
      });
      return { server, body: { source: 'yourls', token: user.signature, base_url: server.url } };
    },
  },
  {
    source: 'csv',
    lacks: [],
    newHost: 'go.csv-import.com',
    oldHost: null,
    clashSlug: 'taken-csv',
    tags: ['campaign', 'spring'],
    expiry: true,
    rows: 3,
    start() {
      // Our own export (docs/importing/export.md), as another Linkplane instance wrote it: `dom_default` is its default
      // domain, so that row goes on ours (where the clash is).
      const file = linkplaneExportCsv([
        { id: 'lnk_launch', domain_id: 'dom_go', domain: 'go.csv-import.com', slug: 'launch', url: DEST, title: 'Spring launch', tags: ['campaign', 'spring'], expires_at: EXPIRY, created_at: '2025-03-01T09:30:00.000Z' },
        { id: 'lnk_plain', domain_id: 'dom_go', domain: 'go.csv-import.com', slug: 'plain', url: 'https://example.com/plain', created_at: '2025-03-02T09:30:00.000Z' },
        { id: 'lnk_taken', domain_id: 'dom_default', domain: 'lnk.other.test', slug: 'taken-csv', url: 'https://example.com/clash', created_at: '2025-03-03T09:30:00.000Z' },
      ]);
      return Promise.resolve({ server: null, body: { source: 'csv', file } });
    },
  },
];

/** A file as `GET /v1/links/export?format=csv` writes it: every column, the ones not given empty. */
export function linkplaneExportCsv(rows: ReadonlyArray<Record<string, unknown>>): string {
  const cells = rows.map((row) =>
    LINK_EXPORT_COLUMNS.map((column) => {
      const value = row[column];
      if (value === undefined || value === null) return column === 'tags' || column === 'targeting' || column === 'rules' ? '[]' : column === 'workspace_rules_off' || column === 'has_password' || column === 'archived' ? 'false' : '';
      return typeof value === 'string' ? value : JSON.stringify(value);
    }),
  );
  return Papa.unparse([[...LINK_EXPORT_COLUMNS], ...cells], LINK_EXPORT_UNPARSE);
}

/** The links a case's import must leave: the rich one with what the source has, nothing for the clashing row. */
export function expectImportedCase(c: ImportCase, links: readonly Link[]): Link {
  const launchHost = c.newHost ?? c.oldHost!;
  const launch = links.find((l) => l.slug === 'launch' && l.domain === launchHost);
  expect(launch, `${c.source}: ${JSON.stringify(links.map((l) => `${l.domain}/${l.slug}`))}`).to.not.equal(undefined);
  expect(launch!.url).to.equal(DEST);
  expect(launch!.title).to.equal('Spring launch');
  // A source without tags or expiry leaves them empty: nothing is invented.
  expect(launch!.tags.map((t) => t.name).sort(), 'tags').to.deep.equal(c.tags);
  expect(launch!.expires_at, 'expiry').to.equal(c.expiry ? EXPIRY : null);
  expect(links.filter((l) => l.url === 'https://example.com/clash'), 'the clashing row is not created').to.deep.equal([]);
  return launch!;
}
