// Resuming a list a service pages by "the items after this id" (Dub's `startingAfter`, Rebrandly's `last`) when that
// id has been deleted between two pages (a long import, a worker restarted hours later): the service refuses an id it
// no longer knows, and one id alone would leave the import stuck. So a cursor keeps the last few ids of the page, in
// page order, and the read falls back from the last to the one before it. That skips nothing and repeats nothing: new
// links sort at the head of both lists (newest first), so nothing sits between two ids of one page but links that
// were there when it was read, and every id tried and refused is a link deleted since.
import { SourceError, type SourceKind } from '../source.ts';

/** How many of a page's last ids a cursor keeps. */
export const RESUME_ANCHORS = 10;

/** What `read` answers when the service does not know the id it was asked to resume after. */
export const ANCHOR_GONE: unique symbol = Symbol('anchor gone');

/** The page after the newest anchor the service still knows (after none when there are no anchors: the first page). */
export async function readAfterAnchors<T>(kind: SourceKind, anchors: readonly string[], read: (after: string | null) => Promise<T | typeof ANCHOR_GONE>): Promise<T> {
  if (anchors.length === 0) {
    const first = await read(null);
    if (first === ANCHOR_GONE) throw new Error('a first page has no anchor to lose');
    return first;
  }
  for (let at = anchors.length - 1; at >= 0; at--) {
    const page = await read(anchors[at]!);
    if (page !== ANCHOR_GONE) return page;
  }
  throw new SourceError('input', `${kind}: the last links read before the import stopped have all been deleted since, so it cannot resume where it was; start it again (links already imported are not created twice)`);
}

/** The anchors a cursor keeps for a page: the last ids of its rows that have one, in page order. */
export function anchorsOf(rows: readonly unknown[], idOf: (row: unknown) => string | null): string[] {
  return rows
    .map(idOf)
    .filter((id): id is string => id !== null)
    .slice(-RESUME_ANCHORS);
}
