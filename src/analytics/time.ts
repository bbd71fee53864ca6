// Time in analytics: rollup buckets are UTC quarter-hours, hours, quarter-days (six hours, from 00:00 UTC) and days;
// answers are in the requested IANA zone. A range or a zone bucket is cut into the largest rollup buckets it wholly
// contains (UTC days in the middle, then six hours, hours and quarter-hours towards the edges: a day in New York is
// 9 rollups rather than 24 hours). Every UTC offset in use is a multiple of 15 minutes (India +5:30, Nepal +5:45,
// Chatham +12:45), so every local hour, day, week and month boundary falls on a quarter-hour and is answered exactly.

export const QUARTER_MS = 15 * 60_000;
export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;
export const SIX_HOURS_MS = 6 * HOUR_MS;

/** Quarter-hour, hour, six hours (a quarter-day), day. */
export type Grain = 'q' | 'h' | 's' | 'd';
export const GRAIN_MS: Record<Grain, number> = { q: QUARTER_MS, h: HOUR_MS, s: SIX_HOURS_MS, d: DAY_MS };
/** Coarsest first. */
const CUTS: readonly Grain[] = ['d', 's', 'h', 'q'];

export function bucketStart(ms: number, grain: Grain): number {
  return Math.floor(ms / GRAIN_MS[grain]) * GRAIN_MS[grain];
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(zone, f);
  }
  return f;
}

// Names asked before and their answers: building an Intl.DateTimeFormat to check a name took 0.3 ms of every
// analytics request. Bounded, as the names come from requests.
const canonical = new Map<string, string | null>();

/** The canonical name of an IANA zone, or null if the runtime does not know it. */
export function canonicalZone(name: string): string | null {
  if (name.length === 0 || name.length > 64) return null;
  const known = canonical.get(name);
  if (known !== undefined) return known;
  let answer: string | null;
  try {
    const resolved = new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
    // ICU answers some current names with their older alias (Asia/Kathmandu → Asia/Katmandu): keep the name asked.
    answer = resolved.toLowerCase() === name.toLowerCase() ? resolved : name;
  } catch {
    answer = null;
  }
  if (canonical.size >= 1000) canonical.clear();
  canonical.set(name, answer);
  return answer;
}

export interface LocalParts {
  year: number;
  /** 0-based, as Date.UTC takes it. */
  month: number;
  day: number;
  hour: number;
  minute: number;
}

// Local times worked out before, per zone and instant. A time series asks Intl for the same instants on every request
// (its buckets' boundaries, a few per bucket: 3 to 20 ms of a 90-day daily series in New York); the answer for an
// instant never changes. Bounded: cleared when full.
const knownParts = new Map<string, Map<number, Readonly<LocalParts>>>();
const KNOWN_PARTS_MAX = 20_000;
let knownPartsSize = 0;

export function localParts(ms: number, zone: string): Readonly<LocalParts> {
  let ofZone = knownParts.get(zone);
  const known = ofZone?.get(ms);
  if (known) return known;
  const out: Record<string, number> = {};
  for (const part of formatter(zone).formatToParts(new Date(ms))) if (part.type !== 'literal') out[part.type] = Number(part.value);
  const parts = Object.freeze({ year: out.year!, month: out.month! - 1, day: out.day!, hour: out.hour!, minute: out.minute! });
  if (knownPartsSize >= KNOWN_PARTS_MAX) {
    knownParts.clear();
    knownPartsSize = 0;
    ofZone = undefined;
  }
  if (!ofZone) knownParts.set(zone, (ofZone = new Map<number, Readonly<LocalParts>>()));
  ofZone.set(ms, parts);
  knownPartsSize++;
  return parts;
}

/** Offset of the zone from UTC at an instant, in milliseconds (east positive). */
export function offsetAt(ms: number, zone: string): number {
  const p = localParts(ms, zone);
  const seconds = new Date(ms).getUTCSeconds();
  return Date.UTC(p.year, p.month, p.day, p.hour, p.minute, seconds) - (ms - (ms % 1000));
}

/**
 * The instant a local wall-clock time occurs (fields may overflow, as in Date.UTC). A time skipped by a DST jump is
 * taken after the jump; a repeated one at its first occurrence.
 */
export function zonedTime(zone: string, year: number, month: number, day: number, hour = 0, minute = 0): number {
  const wall = Date.UTC(year, month, day, hour, minute);
  const first = wall - offsetAt(wall, zone);
  const second = wall - offsetAt(first, zone);
  if (first === second) return first;
  // Two candidates: keep the earliest that reads back as the wall time, else (a gap) the later instant.
  const candidates = [Math.min(first, second), Math.max(first, second)];
  for (const c of candidates) if (c + offsetAt(c, zone) === wall) return c;
  return Math.max(first, second);
}

export type Granularity = 'hour' | 'day' | 'week' | 'month';

/** Start of the local period (of the granularity) holding the instant. */
export function periodStart(ms: number, zone: string, granularity: Granularity): number {
  const p = localParts(ms, zone);
  switch (granularity) {
    case 'hour':
      return ms - (p.minute * 60_000 + (ms % 60_000));
    case 'day':
      return zonedTime(zone, p.year, p.month, p.day);
    case 'week': {
      const weekday = (new Date(Date.UTC(p.year, p.month, p.day)).getUTCDay() + 6) % 7; // Monday 0
      return zonedTime(zone, p.year, p.month, p.day - weekday);
    }
    case 'month':
      return zonedTime(zone, p.year, p.month, 1);
  }
}

/** Start of the next local period after the one starting at `start`. */
export function nextPeriod(start: number, zone: string, granularity: Granularity): number {
  if (granularity === 'hour') {
    // An hour later, then back onto the local hour (only a 30-minute DST shift, Lord Howe Island, moves it).
    const next = start + HOUR_MS;
    const minute = localParts(next, zone).minute;
    return minute === 0 ? next : next - minute * 60_000 + (minute >= 30 ? HOUR_MS : 0);
  }
  const p = localParts(start, zone);
  if (granularity === 'day') return zonedTime(zone, p.year, p.month, p.day + 1);
  if (granularity === 'week') return zonedTime(zone, p.year, p.month, p.day + 7);
  return zonedTime(zone, p.year, p.month + 1, 1);
}

// The last minute formatted, per zone: offsets change only on whole minutes, and the CSV export formats clicks in time
// order. Asking Intl for every one of a million rows was a fifth of the export's time; building the minute's text
// (local date and time, offset) once, only the seconds are written per row.
const lastMinute = new Map<string, { minute: number; prefix: string; suffix: string }>();

function minuteInZone(ms: number, zone: string): { prefix: string; suffix: string } {
  const minute = Math.floor(ms / 60_000);
  const last = lastMinute.get(zone);
  if (last?.minute === minute) return last;
  const offset = offsetAt(minute * 60_000, zone);
  // `YYYY-MM-DDTHH:MM:` of the local time.
  const prefix = new Date(minute * 60_000 + offset).toISOString().slice(0, 17);
  const minutes = Math.abs(offset) / 60_000;
  const suffix = offset === 0 ? 'Z' : `${offset < 0 ? '-' : '+'}${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;
  if (lastMinute.size > 1000) lastMinute.clear();
  const entry = { minute, prefix, suffix };
  lastMinute.set(zone, entry);
  return entry;
}

/** ISO 8601 with the zone's offset at that instant, e.g. `2026-03-08T00:00:00-05:00`. */
export function isoInZone(ms: number, zone: string): string {
  const { prefix, suffix } = minuteInZone(ms, zone);
  const second = Math.floor(ms / 1000) - Math.floor(ms / 60_000) * 60;
  return `${prefix}${second < 10 ? '0' : ''}${second}${suffix}`;
}

/** A run of consecutive rollup buckets of one grain: [from, to). */
export interface Run {
  grain: Grain;
  from: number;
  to: number;
}

/**
 * Cuts [from, to) (both on quarter-hours) into runs of the largest UTC buckets it wholly contains: days in the middle,
 * then six hours, hours and quarter-hours towards each end.
 */
export function decompose(from: number, to: number): Run[] {
  const runs: Run[] = [];
  cut(from, to, 0, runs);
  return runs;
}

function cut(from: number, to: number, level: number, runs: Run[]): void {
  if (to <= from) return;
  const grain = CUTS[level]!;
  const size = GRAIN_MS[grain];
  if (grain === 'q') {
    runs.push({ grain, from, to });
    return;
  }
  const inner = Math.ceil(from / size) * size;
  const outer = Math.floor(to / size) * size;
  if (inner >= outer) {
    cut(from, to, level + 1, runs);
    return;
  }
  cut(from, inner, level + 1, runs);
  runs.push({ grain, from: inner, to: outer });
  cut(outer, to, level + 1, runs);
}
