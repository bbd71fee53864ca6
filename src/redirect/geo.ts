import type { IncomingHttpHeaders } from 'node:http';
import ipaddr from 'ipaddr.js';
import maxmind, { type AnonymousIPResponse, type AsnResponse, type CityResponse, type CountryResponse, type Reader } from 'maxmind';
import { PROXY_TYPES } from '../visitor/visitor-profile.ts';
import { AsnRanges, openAsnPaths, openCountryDbPath } from './open-geo-data.ts';
import { Lru } from '../platform/lru.ts';
import type { ProxyType } from '../visitor/visitor-profile.ts';

export interface GeoFacts {
  /** ISO 3166-1 alpha-2, upper-case; null when unknown (including the "XX" and "T1" placeholders). */
  country: string | null;
  region: string | null;
  city: string | null;
  asn: number | null;
  timezone: string | null;
  proxyType: ProxyType | null;
}

export interface GeoDatabasePaths {
  readonly cityDb: string | null;
  readonly asnDb: string | null;
  readonly anonymousDb: string | null;
  /**
   * Fill a kind the operator configured no database for (country, ASN) from the openly licensed data shipped as
   * dependencies (open-geo-data.ts); a configured database of that kind always wins.
   */
  readonly openData?: boolean;
}

/**
 * The packaged country database's records are `{ country_code }`, not MaxMind's shape; the reader's type wants one
 * of MaxMind's, so it is typed as a Country reader and its records read through `packagedCountryCode`.
 */
type CountryRecord = CountryResponse;

function packagedCountryCode(record: CountryRecord | null): string | null {
  const code = (record as { country_code?: unknown } | null)?.country_code;
  return typeof code === 'string' ? code : null;
}

/** One load per process, shared by every profiler (tests open many; each redirect replica opens one). */
let openCountry: Promise<Reader<CountryRecord> | null> | null = null;
let openAsn: Promise<AsnRanges | null> | null = null;

function packagedCountry(): Promise<Reader<CountryRecord> | null> {
  const path = openCountryDbPath();
  openCountry ??= path === null ? Promise.resolve(null) : maxmind.open<CountryRecord>(path, { cache: RECORD_CACHE });
  return openCountry;
}

function packagedAsn(): Promise<AsnRanges | null> {
  const paths = openAsnPaths();
  openAsn ??= paths === null ? Promise.resolve(null) : AsnRanges.load(paths);
  return openAsn;
}

/** Decoded records kept per database: a City record carries names in many languages, worth decoding once. */
const RECORD_CACHE = { max: 10_000 };
/** Addresses whose answer is remembered: the databases never change while open, and visitors come back. */
const FACTS_CACHE_MAX = 10_000;
const NO_FACTS: Readonly<GeoFacts> = Object.freeze({ country: null, region: null, city: null, asn: null, timezone: null, proxyType: null });

/**
 * The MaxMind-format databases (GeoIP2/GeoLite2 City, ASN, Anonymous IP), each optional. Lookups are in-memory
 * tree walks over a file read at start-up. A database updated on disk is picked up at the next start.
 */
export class GeoDatabases {
  private readonly city: Reader<CityResponse> | null;
  private readonly asn: Reader<AsnResponse> | null;
  private readonly anonymous: Reader<AnonymousIPResponse> | null;
  private readonly openCountry: Reader<CountryRecord> | null;
  private readonly openAsn: AsnRanges | null;
  /**
   * Answers by address. A lookup walks up to five databases and, for the open data, classifies the address first
   * (ipaddr.js's range table, a few microseconds): per redirect, more than the rest of the visitor profile.
   */
  private readonly facts = new Lru<Readonly<GeoFacts>>(FACTS_CACHE_MAX);

  constructor(readers: {
    city: Reader<CityResponse> | null;
    asn: Reader<AsnResponse> | null;
    anonymous: Reader<AnonymousIPResponse> | null;
    openCountry?: Reader<CountryRecord> | null;
    openAsn?: AsnRanges | null;
  }) {
    this.city = readers.city;
    this.asn = readers.asn;
    this.anonymous = readers.anonymous;
    this.openCountry = readers.openCountry ?? null;
    this.openAsn = readers.openAsn ?? null;
  }

  static async open(paths: GeoDatabasePaths): Promise<GeoDatabases> {
    const openData = paths.openData ?? false;
    const [city, asn, anonymous, openCountry, openAsn] = await Promise.all([
      paths.cityDb === null ? null : maxmind.open<CityResponse>(paths.cityDb, { cache: RECORD_CACHE }),
      paths.asnDb === null ? null : maxmind.open<AsnResponse>(paths.asnDb, { cache: RECORD_CACHE }),
      paths.anonymousDb === null ? null : maxmind.open<AnonymousIPResponse>(paths.anonymousDb, { cache: RECORD_CACHE }),
      openData && paths.cityDb === null ? packagedCountry() : null,
      openData && paths.asnDb === null ? packagedAsn() : null,
    ]);
    return new GeoDatabases({ city, asn, anonymous, openCountry, openAsn });
  }

  get empty(): boolean {
    return this.city === null && this.asn === null && this.anonymous === null && this.openCountry === null && this.openAsn === null;
  }

  /** Which sources answer, for the start-up log line. */
  get sources(): { country: 'configured' | 'open-data' | null; asn: 'configured' | 'open-data' | null } {
    return {
      country: this.city !== null ? 'configured' : this.openCountry !== null ? 'open-data' : null,
      asn: this.asn !== null ? 'configured' : this.openAsn !== null ? 'open-data' : null,
    };
  }

  /**
   * What the databases know about a (valid, normalised) address; every field null without databases. The answer
   * is shared by every lookup of the address (frozen): copy it to change it.
   */
  lookup(ip: string | null): Readonly<GeoFacts> {
    if (ip === null) return NO_FACTS;
    let facts = this.facts.get(ip);
    if (facts === undefined) {
      facts = Object.freeze(this.find(ip));
      this.facts.set(ip, facts);
    }
    return facts;
  }

  private find(ip: string): GeoFacts {
    const facts: GeoFacts = { country: null, region: null, city: null, asn: null, timezone: null, proxyType: null };
    const v6 = ip.includes(':');
    const city = find(this.city, ip, v6);
    if (city) {
      facts.country = countryCode(city.country?.iso_code);
      facts.region = city.subdivisions?.[0]?.names?.en ?? null;
      facts.city = city.city?.names?.en ?? null;
      facts.timezone = city.location?.time_zone ?? null;
    }
    const asn = find(this.asn, ip, v6);
    if (asn && asn.autonomous_system_number > 0) facts.asn = asn.autonomous_system_number;
    if ((this.openCountry !== null || this.openAsn !== null) && isPublicUnicast(ip, v6)) {
      if (this.openCountry !== null) facts.country = countryCode(packagedCountryCode(find(this.openCountry, ip, v6)));
      if (this.openAsn !== null) facts.asn = this.openAsn.lookup(ip);
    }
    const anonymous = find(this.anonymous, ip, v6);
    if (anonymous) facts.proxyType = anonymousProxyType(anonymous);
    return facts;
  }
}

/**
 * The open data is built from registry allocations, and places some reserved blocks (the documentation ranges
 * among them) in a country; only globally routable unicast addresses are looked up in it.
 */
function isPublicUnicast(ip: string, v6: boolean): boolean {
  try {
    // The family is known: `ipaddr.parse` would try IPv6 first (and throw, an Error with its stack, for every IPv4
    // address) before parsing an IPv4 address twice, on every redirect.
    if (!v6) return ipaddr.IPv4.parse(ip).range() === 'unicast';
    const address = ipaddr.IPv6.parse(ip);
    return (address.isIPv4MappedAddress() ? address.toIPv4Address() : address).range() === 'unicast';
  } catch {
    return false;
  }
}

/**
 * An IPv4-only database walked with an IPv6 address would answer for whatever IPv4 address its first 32 bits
 * spell, so such a lookup is not made.
 */
function find<T extends AnonymousIPResponse | AsnResponse | CityResponse | CountryResponse>(reader: Reader<T> | null, ip: string, v6: boolean): T | null {
  if (reader === null || (v6 && reader.metadata.ipVersion === 4)) return null;
  return reader.get(ip);
}

/** The strongest claim first: a Tor exit is often also a hosting address, a VPN exit too. */
function anonymousProxyType(record: AnonymousIPResponse): ProxyType | null {
  if (record.is_tor_exit_node) return 'TOR';
  if (record.is_anonymous_vpn) return 'VPN';
  if (record.is_public_proxy) return 'PUB';
  if (record.is_residential_proxy) return 'SES';
  if (record.is_hosting_provider) return 'DCH';
  return null;
}

/**
 * Location an edge in front of us (Cloudflare, CloudFront, or any proxy writing the generic X-Geo-* headers) put
 * in the request; only called when TRUST_EDGE_HEADERS is on, since a client can send any of them. Per field the
 * generic header wins over Cloudflare's, which wins over CloudFront's: an operator who writes X-Geo-* means it.
 */
export function edgeGeo(headers: IncomingHttpHeaders): GeoFacts {
  const proxy = header(headers, 'x-proxy-type')?.toUpperCase() ?? null;
  return {
    country: countryCode(header(headers, 'x-geo-country') ?? header(headers, 'cf-ipcountry') ?? header(headers, 'cloudfront-viewer-country')),
    region: header(headers, 'x-geo-region') ?? header(headers, 'cf-region') ?? header(headers, 'cloudfront-viewer-country-region-name'),
    city: header(headers, 'x-geo-city') ?? header(headers, 'cf-ipcity') ?? header(headers, 'cloudfront-viewer-city'),
    asn: asNumber(header(headers, 'x-geo-asn') ?? header(headers, 'cloudfront-viewer-asn')),
    timezone: header(headers, 'x-geo-timezone') ?? header(headers, 'cf-timezone') ?? header(headers, 'cloudfront-viewer-time-zone'),
    proxyType: proxy !== null && (PROXY_TYPES as readonly string[]).includes(proxy) ? (proxy as ProxyType) : null,
  };
}

/**
 * The database first, edge headers fill its gaps. The database answers for the address we computed, with data we
 * chose and can pin in tests; headers cover a deployment without databases, and fields a database lacks (GeoLite
 * often has a country but no city). Location is taken as a whole: header region, city and time zone only fill in
 * when the header country agrees with the database's (or the database has none), so a visitor is never placed in
 * a city of another country. ASN and proxy type are independent facts and fill in on their own.
 */
export function mergeGeo(database: Readonly<GeoFacts>, edge: GeoFacts): GeoFacts {
  const merged = { ...database };
  if (merged.country === null || edge.country === null || edge.country === merged.country) {
    merged.country ??= edge.country;
    merged.region ??= edge.region;
    merged.city ??= edge.city;
    merged.timezone ??= edge.timezone;
  }
  merged.asn ??= edge.asn;
  merged.proxyType ??= edge.proxyType;
  return merged;
}

const HIGH_BYTE = /[\x80-\xff]/;
const MAX_HEADER = 200;

/**
 * A trimmed header value, or null when absent or empty. Node decodes header bytes as latin1; edges send UTF-8
 * ("Zürich"), so non-ASCII values are re-decoded, and kept as they came when they are not valid UTF-8.
 */
function header(headers: IncomingHttpHeaders, name: string): string | null {
  const raw = headers[name];
  const value = (Array.isArray(raw) ? raw[0] : raw)?.trim();
  if (value === undefined || value === '') return null;
  const capped = value.length > MAX_HEADER ? value.slice(0, MAX_HEADER) : value;
  if (!HIGH_BYTE.test(capped)) return capped;
  const utf8 = Buffer.from(capped, 'latin1').toString('utf8');
  return utf8.includes('\ufffd') ? capped : utf8;
}

/** Upper-case alpha-2; the "unknown" (XX) and "Tor" (T1) placeholders edges use are no country. */
function countryCode(value: string | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  const code = value.toUpperCase();
  if (code === 'XX' || code === 'T1' || !/^[A-Z]{2}$/.test(code)) return null;
  return code;
}

/** "13335" or "AS13335". */
function asNumber(value: string | null): number | null {
  if (value === null) return null;
  const match = /^(?:AS)?(\d{1,10})$/i.exec(value);
  if (!match) return null;
  const asn = Number(match[1]);
  return asn >= 1 && asn <= 4_294_967_295 ? asn : null;
}

interface ZoneClock {
  formatter: Intl.DateTimeFormat;
  /** The 15-minute UTC slice the offset below was computed for: offsets only change on such boundaries. */
  sliceStart: number;
  offsetMs: number;
}

const SLICE_MS = 15 * 60_000;
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
const MAX_ZONES = 1_000;

/**
 * Local hour and ISO weekday of an instant in a visitor's time zone. Formatting a date per request would allocate
 * a parts array each time; instead each zone's UTC offset is computed once per 15-minute slice (every time zone
 * in use changes offset only on quarter-hour boundaries of UTC), and the hour and weekday follow by arithmetic.
 * One formatter per zone; an unknown zone is answered in UTC.
 */
export class LocalClock {
  private readonly zones = new Map<string, ZoneClock | null>();

  /** The zone as given when the runtime knows it, else null (the visitor is then placed in UTC). */
  validZone(timezone: string | null): string | null {
    return timezone !== null && this.zone(timezone) !== null ? timezone : null;
  }

  at(now: Date, timezone: string | null): { localHour: number; weekday: number } {
    const nowMs = now.getTime();
    const clock = timezone === null ? null : this.zone(timezone);
    let offsetMs = 0;
    if (clock !== null) {
      const slice = nowMs - (((nowMs % SLICE_MS) + SLICE_MS) % SLICE_MS);
      if (slice !== clock.sliceStart) {
        clock.offsetMs = offsetAt(clock.formatter, slice);
        clock.sliceStart = slice;
      }
      offsetMs = clock.offsetMs;
    }
    const local = nowMs + offsetMs;
    const days = Math.floor(local / DAY_MS);
    const localHour = Math.floor((local - days * DAY_MS) / HOUR_MS);
    // 1970-01-01 was a Thursday (ISO 4).
    const weekday = ((((days + 3) % 7) + 7) % 7) + 1;
    return { localHour, weekday };
  }

  private zone(timezone: string): ZoneClock | null {
    const known = this.zones.get(timezone);
    if (known !== undefined) return known;
    let clock: ZoneClock | null;
    try {
      const formatter = new Intl.DateTimeFormat('en-US', {
        timeZone: timezone,
        hourCycle: 'h23',
        year: 'numeric',
        month: 'numeric',
        day: 'numeric',
        hour: 'numeric',
        minute: 'numeric',
      });
      clock = { formatter, sliceStart: Number.NaN, offsetMs: 0 };
    } catch {
      clock = null;
    }
    if (this.zones.size >= MAX_ZONES) this.zones.clear();
    this.zones.set(timezone, clock);
    return clock;
  }
}

/** The zone's offset from UTC at an instant (on a minute boundary), in ms. */
function offsetAt(formatter: Intl.DateTimeFormat, instant: number): number {
  const parts = { year: 1970, month: 1, day: 1, hour: 0, minute: 0 };
  for (const part of formatter.formatToParts(instant)) {
    if (part.type in parts) parts[part.type as keyof typeof parts] = Number(part.value);
  }
  const asUtc = Date.UTC(parts.year, parts.month - 1, parts.day, parts.hour, parts.minute);
  return asUtc - instant;
}
