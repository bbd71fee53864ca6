// Shlink's per-device destinations in our targeting shape. Shlink 3.5 to 3.7 has `deviceLongUrls` (android, ios,
// desktop) on each short URL; Shlink 4.0 replaced them with redirect rules: a list, by priority, of a long URL and
// conditions that must all hold (docs/swagger/definitions/SetShortUrlRedirectRule.json; the device values are
// module/Core/src/Model/DeviceType.php). Our targeting is also "first entry whose every condition holds wins", so a
// rule maps to an entry when each of its conditions has an equivalent here; a rule that has one we cannot match on is
// left out and said so, never imported with that condition dropped (it would send visitors it was not meant for).
import type { TargetingEntry } from '../../rules/rule.schemas.ts';
import type { DEVICES, OPERATING_SYSTEMS } from '../../platform/schema.ts';
import { isHttpUrl } from './mapping.ts';

export interface ShlinkCondition {
  type: string;
  matchKey: string | null;
  matchValue: string | null;
}

export interface ShlinkRedirectRule {
  longUrl: string;
  priority: number;
  conditions: ShlinkCondition[];
}

export interface ShlinkDeviceLongUrls {
  android?: string | null;
  ios?: string | null;
  desktop?: string | null;
}

export interface MappedTargeting {
  targeting: TargetingEntry[];
  warnings: string[];
}

type Match = TargetingEntry['match'];
type Device = (typeof DEVICES)[number];
type Os = (typeof OPERATING_SYSTEMS)[number];

/** Our links hold at most this many targeting entries (spec 2.1). */
const MAX_ENTRIES = 50;

/**
 * Shlink's device types, read from the visitor's platform: `mobile` is any Android or iOS device, tablets included,
 * so it is those two systems here; `desktop` is a desktop browser. Chrome OS has no system of its own here (`other`
 * would also take every unknown system), so a rule on it is not imported.
 */
const DEVICE_TYPES: Record<string, Partial<Pick<Match, 'device' | 'os'>>> = {
  android: { os: ['android'] },
  ios: { os: ['ios'] },
  mobile: { os: ['ios', 'android'] },
  desktop: { device: ['desktop'] },
  windows: { os: ['windows'] },
  macos: { os: ['macos'] },
  linux: { os: ['linux'] },
};

const LANGUAGE = /^[a-z]{2,3}(?:-[A-Za-z0-9]{2,8})?$/;

/** Our condition for one of Shlink's, or the reason there is none. */
function conditionOf(condition: ShlinkCondition): Partial<Match> | string {
  const value = condition.matchValue ?? '';
  switch (condition.type) {
    case 'device':
      return DEVICE_TYPES[value] ?? `the device type "${value}"`;
    case 'language': {
      const [primary = '', ...rest] = value.replace('_', '-').split('-');
      const tag = [primary.toLowerCase(), ...rest].join('-');
      return LANGUAGE.test(tag) ? { language: [tag] } : `the language "${value}"`;
    }
    case 'geolocation-country-code':
      return /^[A-Za-z]{2}$/.test(value) ? { country: [value.toUpperCase()] } : `the country "${value}"`;
    default:
      return `a ${condition.type} condition`;
  }
}

/** Two conditions on the same dimension must both hold: the values both allow. */
function intersect<T>(held: T[] | undefined, added: T[]): T[] {
  return held === undefined ? added : held.filter((value) => added.includes(value));
}

function entryOf(rule: ShlinkRedirectRule): TargetingEntry | string {
  if (!isHttpUrl(rule.longUrl)) return `it redirects to ${JSON.stringify(rule.longUrl)}, which is not an http(s) URL`;
  if (rule.conditions.length === 0) return 'it has no conditions';
  let country: string[] | undefined;
  let device: Device[] | undefined;
  let os: Os[] | undefined;
  let language: string[] | undefined;
  for (const condition of rule.conditions) {
    const mapped = conditionOf(condition);
    if (typeof mapped === 'string') return `Linkplane targeting cannot match on ${mapped}`;
    if (mapped.country) country = intersect(country, mapped.country);
    if (mapped.device) device = intersect(device, mapped.device);
    if (mapped.os) os = intersect(os, mapped.os);
    if (mapped.language) language = intersect(language, mapped.language);
  }
  if ([country, device, os, language].some((values) => values?.length === 0)) return 'its conditions can never hold together';
  const match: Match = { ...(country && { country }), ...(device && { device }), ...(os && { os }), ...(language && { language }) };
  return { match, url: rule.longUrl };
}

/** Targeting entries for Shlink 4's redirect rules, by priority. */
export function targetingOfRules(rules: readonly ShlinkRedirectRule[]): MappedTargeting {
  const targeting: TargetingEntry[] = [];
  const warnings: string[] = [];
  for (const rule of [...rules].sort((a, b) => a.priority - b.priority)) {
    const entry = entryOf(rule);
    if (typeof entry === 'string') warnings.push(`redirect rule ${rule.priority} (to ${rule.longUrl}) was not imported: ${entry}`);
    else if (targeting.length >= MAX_ENTRIES) warnings.push(`redirect rule ${rule.priority} (to ${rule.longUrl}) was not imported: a link holds at most ${MAX_ENTRIES} targeting entries`);
    else targeting.push(entry);
  }
  return { targeting, warnings };
}

/** Targeting entries for Shlink 3's device long URLs. */
export function targetingOfDeviceLongUrls(urls: ShlinkDeviceLongUrls): MappedTargeting {
  const targeting: TargetingEntry[] = [];
  const warnings: string[] = [];
  const add = (name: string, url: string | null | undefined, match: Match) => {
    if (url === null || url === undefined || url === '') return;
    if (isHttpUrl(url)) targeting.push({ match, url });
    else warnings.push(`the ${name} long URL ${JSON.stringify(url)} was not imported: it is not an http(s) URL`);
  };
  add('iOS', urls.ios, { os: ['ios'] });
  add('Android', urls.android, { os: ['android'] });
  add('desktop', urls.desktop, { device: ['desktop'] });
  return { targeting, warnings };
}
