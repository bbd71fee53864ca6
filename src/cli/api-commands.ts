// The commands that talk to a running Linkplane over its API with a saved profile (`gh`- and `stripe`-style):
// login, logout, profile list, links create|list|get, analytics summary. Built on the SDK (sdk/): its typed errors,
// retries and idempotency keys are theirs. Text for people by default; `--json` prints the API's answer as JSON.
import { Linkplane, unwrap, type AnalyticsQuery, type Link, type LinkCreate } from '../../sdk/src/index.ts';
import { apiBase } from './api-client.ts';
import { DEFAULT_PROFILE, ProfileError, configFile, credentials, readProfiles, validProfileName, writeProfiles, type Profile } from './profiles.ts';

export interface ApiIo {
  json: boolean;
  env: Record<string, string | undefined>;
  /** Text on stdout. */
  write: (text: string) => void;
  /** The API key given to `login`: typed at a prompt that does not echo it, or the first line of piped stdin. */
  readKey: () => Promise<string>;
}

/** A wrong value on the command line (the caller turns it into exit 2 with a hint). */
export class ApiUsageError extends Error {}

export type Values = Record<string, string | boolean | string[] | undefined>;

const str = (values: Values, flag: string): string | undefined => {
  const v = values[flag];
  return typeof v === 'string' ? v : undefined;
};

function out(io: ApiIo, value: unknown, text: () => string): void {
  io.write(io.json ? `${JSON.stringify(value, null, 2)}\n` : `${text()}\n`);
}

function client(values: Values, io: ApiIo): Linkplane {
  const { apiUrl, apiKey } = credentials(str(values, 'profile'), io.env);
  return new Linkplane({ apiKey, baseUrl: apiUrl, userAgent: 'linkplane-cli' });
}

export async function login(values: Values, io: ApiIo): Promise<void> {
  const name = str(values, 'profile') ?? (io.env.LINKPLANE_PROFILE || DEFAULT_PROFILE);
  if (!validProfileName(name)) throw new ApiUsageError(`--profile must be letters, digits, ".", "_" or "-" (up to 64), not "${name}"`);
  const apiUrl = (str(values, 'api-url') ?? apiBase(io.env)).replace(/\/+$/, '').replace(/\/v1$/, '');
  if (!/^https?:\/\/[^/]+/.test(apiUrl)) throw new ApiUsageError(`--api-url must be an http(s) URL, not "${apiUrl}"`);
  const apiKey = (await io.readKey()).trim();
  if (apiKey === '') throw new ApiUsageError('no API key given: paste it at the prompt, or pipe it on stdin');
  // The key is saved only once the API has accepted it.
  const key = await unwrap(new Linkplane({ apiKey, baseUrl: apiUrl, userAgent: 'linkplane-cli', maxRetries: 1 }).api.GET('/key'));
  const profiles = readProfiles(io.env);
  const ownerId = (key.kind === 'workspace' ? key.workspace_id : key.partner_id) ?? '';
  profiles[name] = { api_url: apiUrl, api_key: apiKey, key_id: key.id, kind: key.kind, owner_id: ownerId, saved_at: new Date().toISOString() };
  const file = writeProfiles(io.env, profiles);
  out(io, { profile: name, api_url: apiUrl, file, key }, () =>
    `Logged in to ${apiUrl} with key ${key.prefix}… (${key.kind} ${ownerId}; scopes ${key.scopes.join(', ')}).\n` +
    `Saved as profile "${name}" in ${file}.${name === DEFAULT_PROFILE ? '' : ` Use it with --profile ${name}.`}`,
  );
}

export function logout(values: Values, io: ApiIo): void {
  const name = str(values, 'profile') ?? (io.env.LINKPLANE_PROFILE || DEFAULT_PROFILE);
  const profiles = readProfiles(io.env);
  if (!profiles[name]) throw new ProfileError(`no profile "${name}" in ${configFile(io.env)}`);
  delete profiles[name];
  const file = writeProfiles(io.env, profiles);
  out(io, { profile: name, removed: true, file }, () => `Removed profile "${name}" from ${file}. The key itself still works until it is revoked.`);
}

export function profileList(io: ApiIo): void {
  const profiles = readProfiles(io.env);
  const rows = Object.entries(profiles).map(([name, p]: [string, Profile]) => ({ name, api_url: p.api_url, kind: p.kind, owner_id: p.owner_id, key_id: p.key_id, saved_at: p.saved_at }));
  out(io, rows, () =>
    rows.length === 0
      ? `No profiles in ${configFile(io.env)}: run \`linkplane login\`.`
      : table(['PROFILE', 'API', 'KEY OF', 'SAVED'], rows.map((r) => [r.name, r.api_url, `${r.kind} ${r.owner_id}`, r.saved_at])),
  );
}

export async function linksCreate(values: Values, io: ApiIo): Promise<void> {
  const body: LinkCreate = { url: str(values, 'url') ?? '' };
  const slug = str(values, 'slug');
  const title = str(values, 'title');
  const domain = str(values, 'domain-id');
  if (slug !== undefined) body.slug = slug;
  if (title !== undefined) body.title = title;
  if (domain !== undefined) body.domain_id = domain;
  const link = await client(values, io).links.create(body);
  out(io, link, () => `Created ${link.id}: ${link.short_url} → ${link.url}`);
}

export async function linksGet(id: string, values: Values, io: ApiIo): Promise<void> {
  const link = await client(values, io).links.get(id);
  out(io, link, () => describe(link));
}

export async function linksList(values: Values, io: ApiIo): Promise<void> {
  const limitText = str(values, 'limit');
  const limit = limitText === undefined ? 20 : Number(limitText);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw new ApiUsageError('--limit must be a whole number from 1 to 100');
  const all = values.all === true;
  const search = str(values, 'search');
  const links: Link[] = [];
  // Pages of `limit` links; without --all, the first `limit` only.
  for await (const link of client(values, io).links.list({ limit, ...(search === undefined ? {} : { search }) })) {
    links.push(link);
    if (!all && links.length >= limit) break;
  }
  out(io, links, () =>
    links.length === 0 ? 'No links.' : table(['ID', 'SHORT URL', 'DESTINATION', 'CREATED'], links.map((l) => [l.id, l.short_url, l.url, l.created_at])),
  );
}

export async function analyticsSummary(values: Values, io: ApiIo): Promise<void> {
  const query: AnalyticsQuery = {};
  const interval = str(values, 'interval');
  if (interval !== undefined) {
    if (!['24h', '7d', '30d', '90d', '12mo', 'all'].includes(interval)) throw new ApiUsageError('--interval must be 24h, 7d, 30d, 90d, 12mo or all');
    query.interval = interval as NonNullable<AnalyticsQuery['interval']>;
  }
  const link = str(values, 'link');
  const start = str(values, 'start');
  const end = str(values, 'end');
  const timezone = str(values, 'timezone');
  if (link !== undefined) query.link_id = link;
  if (start !== undefined) query.start = start;
  if (end !== undefined) query.end = end;
  if (timezone !== undefined) query.timezone = timezone;
  const s = await client(values, io).analytics.summary(query);
  const revenue = (r: Record<string, number>): string => Object.entries(r).map(([c, v]) => `${(v / 100).toFixed(2)} ${c}`).join(', ') || '0';
  out(io, s, () =>
    [
      `${s.range.start} – ${s.range.end} (${s.range.timezone})${link ? `, link ${link}` : ''}`,
      table(['', 'NOW', 'BEFORE'], [
        ['clicks', String(s.clicks), String(s.previous.clicks)],
        ['unique visitors', String(s.unique_visitors), String(s.previous.unique_visitors)],
        ['conversions', String(s.conversions), String(s.previous.conversions)],
        ['revenue', revenue(s.revenue), revenue(s.previous.revenue)],
      ]),
    ].join('\n'),
  );
}

function describe(link: Link): string {
  const rows: Array<[string, string]> = [
    ['id', link.id],
    ['short url', link.short_url],
    ['destination', link.url],
    ['title', link.title ?? ''],
    ['created', link.created_at],
  ];
  return rows.map(([k, v]) => `${k.padEnd(12)} ${v}`).join('\n');
}

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]): string => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join('  ').trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}
