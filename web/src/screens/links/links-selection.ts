// What the links list does to many links at once. The API changes one link per call (PATCH and DELETE
// /links/{id}); these run a few at a time and report, per link, what failed, so a partial failure is never silent.
import { api, describeError } from '../../api.ts';
import type { Link } from './link-types.ts';

/** Calls in flight at once: quick for a page of 100, gentle on the rate limit. */
const PARALLEL = 4;

export interface BulkOutcome {
  done: Link[];
  failed: { link: Link; reason: string }[];
}

/** Runs `act` on every link, PARALLEL at a time. */
export async function eachLink(links: readonly Link[], act: (link: Link) => Promise<unknown>): Promise<BulkOutcome> {
  const outcome: BulkOutcome = { done: [], failed: [] };
  let next = 0;
  const worker = async () => {
    while (next < links.length) {
      const link = links[next++]!;
      try {
        await act(link);
        outcome.done.push(link);
      } catch (error) {
        outcome.failed.push({ link, reason: describeError(error) });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL, links.length) }, worker));
  return outcome;
}

export type BulkAction =
  | { kind: 'archive'; archived: boolean }
  | { kind: 'tag'; tagId: string }
  | { kind: 'folder'; folderId: string | null }
  | { kind: 'delete' };

/** One link's part of a bulk action. */
export function applyTo(link: Link, action: BulkAction): Promise<unknown> {
  const path = `/v1/links/${encodeURIComponent(link.id)}`;
  switch (action.kind) {
    case 'archive':
      return api.patch(path, { archived: action.archived });
    case 'tag': {
      const ids = link.tags.map((t) => t.id);
      return ids.includes(action.tagId) ? Promise.resolve() : api.patch(path, { tag_ids: [...ids, action.tagId] });
    }
    case 'folder':
      return api.patch(path, { folder_id: action.folderId });
    case 'delete':
      return api.delete(path);
  }
}

/** "1 link", "3 links". */
export function countOf(n: number, one: string, many = `${one}s`): string {
  return `${n.toLocaleString()} ${n === 1 ? one : many}`;
}

/** What a finished bulk action says, in one sentence (and which links failed, with why). */
export function sentenceOf(outcome: BulkOutcome, verb: string): string {
  const ok = outcome.done.length > 0 ? `${verb} ${countOf(outcome.done.length, 'link')}.` : '';
  if (outcome.failed.length === 0) return ok;
  const first = outcome.failed[0]!;
  const failed = `${countOf(outcome.failed.length, 'link')} could not be changed (${first.link.slug}: ${first.reason}${outcome.failed.length > 1 ? ', and others' : ''}).`;
  return [ok, failed].filter(Boolean).join(' ');
}

function cell(value: string): string {
  // A spreadsheet runs cells starting with these as formulas: shown as text instead.
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

/** The chosen links as a CSV file (what the list shows of them), saved by the browser. */
export function downloadSelected(links: readonly Link[], clicks: ReadonlyMap<string, number>): void {
  const header = ['short_url', 'url', 'slug', 'title', 'tags', 'folder_id', 'archived', 'clicks', 'created_at'];
  const rows = links.map((l) =>
    [l.short_url, l.url, l.slug, l.title ?? '', l.tags.map((t) => t.name).join(' '), l.folder_id ?? '', String(l.archived), String(clicks.get(l.id) ?? ''), l.created_at].map(cell).join(','),
  );
  const blob = new Blob([[header.join(','), ...rows].join('\r\n') + '\r\n'], { type: 'text/csv' });
  const url = URL.createObjectURL(blob);
  const anchor = document.createElement('a');
  anchor.href = url;
  anchor.download = `links-selected-${links.length}.csv`;
  document.body.append(anchor);
  anchor.click();
  anchor.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
