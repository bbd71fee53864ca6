import { UAParser } from 'ua-parser-js';
import type { Device, OperatingSystem } from '../visitor/visitor-profile.ts';

export interface UserAgentFacts {
  device: Device;
  os: OperatingSystem;
  /** Browser family as ua-parser-js names it ("Chrome", "Mobile Safari", "Samsung Internet"); null if unknown. */
  browser: string | null;
}

/** Linux distributions ua-parser-js names on their own; Chrome OS and Android are not counted as `linux`. */
const LINUX_NAMES = new Set([
  'Linux',
  'Ubuntu',
  'Kubuntu',
  'Xubuntu',
  'Lubuntu',
  'Debian',
  'Fedora',
  'Arch',
  'Mint',
  'Gentoo',
  'CentOS',
  'RedHat',
  'SUSE',
  'openSUSE',
  'Slackware',
  'Mandriva',
  'Manjaro',
  'Deepin',
  'elementary OS',
  'Zenwalk',
  'PCLinuxOS',
  'Linpus',
  'Mageia',
  'Sabayon',
  'VectorLinux',
]);

/**
 * Device, OS and browser of a User-Agent. The parser is costly (hundreds of regular expressions), so the caller
 * caches the result per User-Agent string.
 *
 * Device: the parser's own verdict when it has one (it knows many tablet and phone models); otherwise Android
 * without the "Mobile" token is a tablet (Google's convention for tablet browsers), everything else a desktop.
 * Older iPads say "iPad" and come out as ios + tablet; iPadOS 13+ Safari presents itself as a Mac and cannot be
 * told apart from one by its User-Agent, so it counts as macos + desktop.
 */
export function parseUserAgent(userAgent: string): UserAgentFacts {
  const result = new UAParser(userAgent).getResult();
  const os = operatingSystem(result.os.name);
  return { device: device(result.device.type, os, userAgent), os, browser: result.browser.name ?? null };
}

function operatingSystem(name: string | undefined): OperatingSystem {
  if (name === undefined) return 'other';
  if (name === 'iOS') return 'ios';
  if (name === 'Android') return 'android';
  if (name === 'Windows') return 'windows';
  if (name === 'Mac OS' || name === 'macOS') return 'macos';
  return LINUX_NAMES.has(name) ? 'linux' : 'other';
}

function device(type: string | undefined, os: OperatingSystem, userAgent: string): Device {
  if (type === 'tablet') return 'tablet';
  if (type === 'mobile' || type === 'wearable') return 'mobile';
  if (os === 'android' && type === undefined) return userAgent.includes('Mobile') ? 'mobile' : 'tablet';
  return 'desktop';
}
