// Link safety: destinations an installation refuses outright (known malware or phishing hosts, patterns such as
// executable downloads), checked on every URL field of a link when it is created or changed. The list is the
// operator's (LINK_BLOCKLIST_HOSTS, LINK_BLOCKLIST_FILE); a refusal names the field and says why.

export interface BlockedHost {
  /** Lowercase ASCII (punycode) hostname; it blocks itself and every subdomain. */
  host: string;
  reason: string;
}

export interface BlockedPattern {
  /** Tested against the whole URL as `new URL(url).href` normalises it (lowercase scheme and host, punycode). */
  pattern: RegExp;
  reason: string;
}

export interface Blocklist {
  hosts: readonly BlockedHost[];
  patterns: readonly BlockedPattern[];
}

export const EMPTY_BLOCKLIST: Blocklist = { hosts: [], patterns: [] };

const DEFAULT_HOST_REASON = 'the host is on the blocklist';
const DEFAULT_PATTERN_REASON = 'the address matches a blocked pattern';

/** A hostname as URL gives it: lowercase, punycode for international names; null when it is not one. */
export function normaliseHost(text: string): string | null {
  try {
    const host = new URL(`http://${text}/`).hostname;
    return host === '' ? null : host.replace(/\.$/, '');
  } catch {
    return null;
  }
}

/**
 * The blocklist file: one entry per line, `#` starts a comment line. An entry is a hostname or a `/regex/flags`,
 * then optionally the reason shown to whoever tries to link there:
 *
 *     malware.example            distributes malware
 *     /\.(exe|scr|msi)([?#]|$)/i executable download
 *
 * Returns the entries and the problems (line numbers), so configuration names every bad line at once.
 */
export function parseBlocklist(text: string): { blocklist: Blocklist; problems: string[] } {
  const hosts: BlockedHost[] = [];
  const patterns: BlockedPattern[] = [];
  const problems: string[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    if (line.startsWith('/')) {
      const match = /^\/(.+)\/([a-z]*)(?:\s+(.*))?$/.exec(line);
      if (!match) return problems.push(`line ${i + 1}: a pattern is written /regex/flags`);
      try {
        patterns.push({ pattern: new RegExp(match[1]!, match[2]!.replace(/[gy]/g, '')), reason: match[3]?.trim() || DEFAULT_PATTERN_REASON });
      } catch (error) {
        problems.push(`line ${i + 1}: ${(error as Error).message}`);
      }
      return;
    }
    const [first, ...rest] = line.split(/\s+/);
    const host = normaliseHost(first!);
    if (host === null || first!.includes('/')) return problems.push(`line ${i + 1}: "${first}" is not a hostname`);
    hosts.push({ host, reason: rest.join(' ').trim() || DEFAULT_HOST_REASON });
  });
  return { blocklist: { hosts, patterns }, problems };
}

export function mergeBlocklists(...lists: Blocklist[]): Blocklist {
  return { hosts: lists.flatMap((l) => l.hosts), patterns: lists.flatMap((l) => l.patterns) };
}

/** Why `url` is refused, or null when it is not. */
export function blockedReason(blocklist: Blocklist, url: string): string | null {
  if (blocklist.hosts.length === 0 && blocklist.patterns.length === 0) return null;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  const host = parsed.hostname.replace(/\.$/, '').toLowerCase();
  for (const entry of blocklist.hosts) {
    if (host === entry.host || host.endsWith(`.${entry.host}`)) return entry.reason;
  }
  for (const entry of blocklist.patterns) {
    if (entry.pattern.test(parsed.href)) return entry.reason;
  }
  return null;
}
