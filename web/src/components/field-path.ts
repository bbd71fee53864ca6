// The api names a refused field by its path in the request (`rules[0].action.url`); people read "Rule 1: the
// action's URL is required." One vocabulary for every screen that lists field errors.

/** Words for the path segments the link, key and webhook bodies use; others read as their name without `_`. */
const WORDS: Record<string, string> = {
  url: 'URL',
  utm: 'UTM parameters',
  ab_test: 'A/B test',
  ios: 'iOS',
  android: 'Android',
  app_url: 'app URL',
  expires_at: 'expiry',
  expired_url: 'URL after expiry',
  tag_ids: 'tags',
  folder_id: 'folder',
  domain_id: 'domain',
  ip_list_ids: 'IP lists',
  button_url: 'button URL',
  '(body)': 'the request',
};

/** One item of a list, singular: `rules[2]` is "Rule 3". */
const ITEMS: Record<string, string> = {
  rules: 'Rule',
  targeting: 'Targeting entry',
  variants: 'Variant',
  destinations: 'Destination',
  events: 'Event',
  scopes: 'Scope',
  links: 'Link',
};

function word(name: string): string {
  return WORDS[name] ?? name.replace(/_/g, ' ');
}

function capitalised(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** "rules[0].action.url" → "Rule 1, action URL"; "" → "". */
export function humanPath(path: string): string {
  const parts: string[] = [];
  const pattern = /([^.[\]]+)|\[(\d+)\]/g;
  let previous: string | null = null;
  for (const match of path.matchAll(pattern)) {
    if (match[2] !== undefined) {
      const index = Number(match[2]) + 1;
      if (previous !== null && ITEMS[previous]) parts[parts.length - 1] = `${ITEMS[previous]} ${index}`;
      else parts.push(`item ${index}`);
      previous = null;
      continue;
    }
    previous = match[1]!;
    parts.push(word(previous));
  }
  // Items stand alone ("Rule 1, action URL"); consecutive plain names read as one phrase.
  const groups: string[] = [];
  for (const part of parts) {
    const last = groups[groups.length - 1];
    if (last !== undefined && !/\d$/.test(last) && !/\d$/.test(part)) groups[groups.length - 1] = `${last} ${part}`;
    else groups.push(part);
  }
  return groups.join(', ');
}

/** A field error as one sentence: `{ path: 'rules[0].action.url', message: 'is required' }` → "Rule 1, action URL is required." */
export function describeDetail(detail: { path: string; message: string }): string {
  const where = humanPath(detail.path);
  const message = detail.message.trim().replace(/\.$/, '');
  return `${capitalised(where ? `${where} ${message}` : message)}.`;
}
