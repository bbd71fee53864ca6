// mingo's $dateTrunc ignores the timezone for hour/minute units and truncates days in the wrong
// direction for negative offsets, so devdb registers this implementation instead. Bins are
// counted from MongoDB's reference instant 2000-01-01T00:00 in the requested timezone.
import type { Options } from 'mingo/types';
import { evalExpr } from 'mingo/core';
import { toNumber } from './values.ts';

const MS: Record<string, number> = { millisecond: 1, second: 1000, minute: 60_000, hour: 3_600_000, day: 86_400_000 };
const REF_LOCAL = Date.UTC(2000, 0, 1);
const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];
const formatters = new Map<string, Intl.DateTimeFormat>();

function floorDiv(a: number, b: number): number {
  return Math.floor(a / b);
}

function fixedOffsetMs(tz: string): number | undefined {
  if (tz === 'UTC' || tz === 'GMT' || tz === 'Z') return 0;
  const m = /^([+-])(\d{2}):?(\d{2})?$/.exec(tz);
  if (!m) return undefined;
  const minutes = Number(m[2]) * 60 + Number(m[3] ?? '0');
  return (m[1] === '-' ? -1 : 1) * minutes * 60_000;
}

function formatter(tz: string): Intl.DateTimeFormat {
  let f = formatters.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: tz,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(tz, f);
  }
  return f;
}

/** Offset (local − UTC) in ms of `tz` at the instant `utcMs`. */
export function tzOffset(tz: string, utcMs: number): number {
  const fixed = fixedOffsetMs(tz);
  if (fixed !== undefined) return fixed;
  const parts: Record<string, number> = {};
  for (const p of formatter(tz).formatToParts(new Date(utcMs))) if (p.type !== 'literal') parts[p.type] = Number(p.value);
  const local = Date.UTC(parts.year ?? 1970, (parts.month ?? 1) - 1, parts.day ?? 1, parts.hour ?? 0, parts.minute ?? 0, parts.second ?? 0);
  return local - (utcMs - (((utcMs % 1000) + 1000) % 1000));
}

function localToUtc(tz: string, localMs: number): number {
  const guess = localMs - tzOffset(tz, localMs);
  return localMs - tzOffset(tz, guess);
}

export function truncateDate(date: Date, unit: string, binSize: number, tz: string, startOfWeek: string): Date {
  const utc = date.getTime();
  const local = utc + tzOffset(tz, utc);
  let truncatedLocal: number;
  if (unit in MS && unit !== 'day') {
    const size = binSize * MS[unit]!;
    truncatedLocal = local - (((local - REF_LOCAL) % size) + size) % size;
  } else if (unit === 'day' || unit === 'week') {
    const day = MS.day!;
    let ref = REF_LOCAL;
    if (unit === 'week') {
      const wanted = WEEKDAYS.indexOf(startOfWeek.slice(0, 3).toLowerCase());
      if (wanted < 0) throw new Error(`$dateTrunc: unknown startOfWeek '${startOfWeek}'`);
      ref += ((wanted - new Date(REF_LOCAL).getUTCDay() + 7) % 7) * day;
    }
    const days = floorDiv(local - ref, day);
    const span = unit === 'week' ? 7 * binSize : binSize;
    truncatedLocal = ref + floorDiv(days, span) * span * day;
  } else if (unit === 'month' || unit === 'quarter' || unit === 'year') {
    const d = new Date(local);
    const months = (d.getUTCFullYear() - 2000) * 12 + d.getUTCMonth();
    const span = (unit === 'month' ? 1 : unit === 'quarter' ? 3 : 12) * binSize;
    const bin = floorDiv(months, span) * span;
    truncatedLocal = Date.UTC(2000 + floorDiv(bin, 12), ((bin % 12) + 12) % 12, 1);
  } else {
    throw new Error(`$dateTrunc: unit '${unit}' is not supported`);
  }
  return new Date(localToUtc(tz, truncatedLocal));
}

export function $dateTrunc(obj: unknown, expr: unknown, options: Options): unknown {
  const args = evalExpr(obj, expr, options) as Record<string, unknown>;
  const { date, unit } = args;
  if (date === null || date === undefined || unit === null || unit === undefined) return null;
  if (!(date instanceof Date)) throw new Error("$dateTrunc: 'date' must resolve to a Date");
  if (typeof unit !== 'string') throw new Error("$dateTrunc: 'unit' must be a string");
  const binSize = args.binSize === undefined || args.binSize === null ? 1 : toNumber(args.binSize);
  if (!(binSize > 0) || !Number.isInteger(binSize)) throw new Error("$dateTrunc: 'binSize' must be a positive integer");
  const tz = typeof args.timezone === 'string' ? args.timezone : 'UTC';
  const startOfWeek = typeof args.startOfWeek === 'string' ? args.startOfWeek : 'sunday';
  return truncateDate(date, unit, binSize, tz, startOfWeek);
}
