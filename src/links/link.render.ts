import { BSON } from 'mongodb';
import type { LinkDoc } from './link.store.ts';
import type { LabelDoc } from './label.store.ts';
import { linkView, tagViews } from './link.view.ts';

/** A stored link rendered as the API shows it (`linkView`), as JSON with the value of `tags` left out. */
export interface RenderedLink {
  id: string;
  createdAt: Date;
  tagIds: readonly string[];
  /** The JSON text before the value of `tags`, and after it. */
  head: string;
  tail: string;
}

const NO_TAGS: ReadonlyMap<string, LabelDoc> = new Map();
const TAGS_KEY = '"tags":';
const EMPTY_TAGS = `${TAGS_KEY}[]`;

/**
 * Renders listed links to JSON from their stored BSON bytes, and remembers each rendering with the exact bytes it
 * came from. A list page otherwise decodes every field of 50 documents into objects, shapes a view of each and
 * serialises it again, on every read; pages are read far more often than links change (a dashboard's first page,
 * an integration polling), and a rendering is a function of the link's bytes alone. A rendering is used only for
 * the same bytes, compared in full, never by id or version: a link changed in any way, by any replica, no longer
 * matches and is rendered afresh, so what is remembered can never be stale, and it is reached only with the bytes
 * of a document the caller's own query returned. Tags are another collection's (renaming a tag changes no link),
 * so their value is filled in from the tags read with every page, never remembered.
 * Bounded: at most `maxEntries` links (about 1.5 KB each for a link without rules), the oldest dropped first.
 */
export class LinkRenderer {
  private readonly defaultBaseUrl: string;
  private readonly maxEntries: number;
  /** By link id: the bytes it was rendered from, and the rendering. */
  private readonly known = new Map<string, { bytes: Buffer; link: RenderedLink }>();
  /**
   * The ids in `known`, each once, oldest first from `next` on: the one to drop when full. Asking the Map for its
   * first key instead would walk past every slot its earlier deletions left, on every miss.
   */
  private readonly order: string[] = [];
  private next = 0;

  constructor(defaultBaseUrl: string, maxEntries = 10_000) {
    this.defaultBaseUrl = defaultBaseUrl;
    this.maxEntries = maxEntries;
  }

  /** `stored`: one stored link, as the driver hands it with `raw: true`. */
  render(stored: Uint8Array): RenderedLink {
    const bytes = Buffer.from(stored.buffer, stored.byteOffset, stored.byteLength);
    const id = leadingId(bytes);
    const known = id === null ? undefined : this.known.get(id);
    if (known?.bytes.equals(bytes)) return known.link;
    const link = renderDoc(BSON.deserialize(bytes) as LinkDoc, this.defaultBaseUrl);
    if (id !== null) {
      if (known === undefined) this.remember(id);
      // A copy: the driver's bytes are a view of its whole reply.
      this.known.set(id, { bytes: Buffer.from(bytes), link });
    }
    return link;
  }

  private remember(id: string): void {
    if (this.order.length < this.maxEntries) {
      this.order.push(id);
      return;
    }
    this.known.delete(this.order[this.next]!);
    this.order[this.next] = id;
    this.next = (this.next + 1) % this.maxEntries;
  }

  /** The link's JSON, with its tags as they are now. */
  json(link: RenderedLink, tags: ReadonlyMap<string, LabelDoc>): string {
    return link.head + (link.tagIds.length === 0 ? '[]' : JSON.stringify(tagViews(link.tagIds, tags))) + link.tail;
  }

  get size(): number {
    return this.known.size;
  }
}

function renderDoc(doc: LinkDoc, defaultBaseUrl: string): RenderedLink {
  // Rendered without tags, the text holds `"tags":[]` once, as a key: the fields before it (id, URLs, slug,
  // title, note, folder) are strings or null, whose JSON cannot hold an unescaped quote.
  const json = JSON.stringify(linkView(doc, NO_TAGS, defaultBaseUrl));
  const at = json.indexOf(EMPTY_TAGS);
  return {
    id: doc._id,
    createdAt: doc.created_at,
    tagIds: doc.tag_ids,
    head: json.slice(0, at + TAGS_KEY.length),
    tail: json.slice(at + EMPTY_TAGS.length),
  };
}

/**
 * The string `_id` a stored document starts with (MongoDB and devdb both store `_id` first), read without
 * decoding the rest; null for any other layout, which is then rendered every time.
 */
function leadingId(bytes: Buffer): string | null {
  // int32 size, then the element: type 0x02 (string), the name "_id\0", int32 length (with its \0), the bytes.
  if (bytes.length < 14 || bytes[4] !== 0x02 || bytes[5] !== 0x5f || bytes[6] !== 0x69 || bytes[7] !== 0x64 || bytes[8] !== 0) return null;
  const length = bytes.readInt32LE(9);
  if (length < 1 || 13 + length > bytes.length) return null;
  return bytes.toString('utf8', 13, 13 + length - 1);
}
