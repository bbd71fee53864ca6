import { expect } from 'chai';
import { BSON } from 'mongodb';
import { LinkRenderer } from '../../src/links/link.render.ts';
import { linkView } from '../../src/links/link.view.ts';
import type { LinkDoc } from '../../src/links/link.store.ts';
import type { LabelDoc } from '../../src/links/label.store.ts';
import { aLink as aPlainLink } from '../helpers/redirect-builders.ts';

const BASE = 'https://lnk.test';

/** The redirect tests' plain link, with ids and times of their own (milliseconds included, which dates must keep). */
function aLink(overrides: Partial<LinkDoc> = {}): LinkDoc {
  const at = new Date('2026-03-04T05:06:07.089Z');
  return aPlainLink({
    _id: 'lnk_aaaaaaaaaaaaaaaaaaaa',
    workspace_id: 'ws_aaaaaaaaaaaaaaaaaaaa',
    domain: 'lnk.test',
    slug: 'abc1234',
    url: 'https://example.com/a',
    created_at: at,
    updated_at: at,
    ...overrides,
  });
}

function aTag(id: string, name: string, color: string | null = null): LabelDoc {
  return { _id: id, workspace_id: 'ws_aaaaaaaaaaaaaaaaaaaa', name, color, created_at: new Date() };
}

/** The JSON the API answered for a link before lists were rendered from bytes: the reference. */
function expected(doc: LinkDoc, tags: ReadonlyMap<string, LabelDoc>): string {
  return JSON.stringify(linkView(doc, tags, BASE));
}

describe('LinkRenderer', () => {
  const tags = new Map([aTag('tag_one', 'one', '#ff0000'), aTag('tag_two', 'two "quoted"')].map((t) => [t._id, t]));

  it('renders a stored link exactly as the link view serialises, tags, dates and every block included', () => {
    const docs = [
      aLink(),
      aLink({
        title: 'Says "tags":[] \\ éè 😀',
        note: 'line\nbreak\u0001',
        tag_ids: ['tag_two', 'tag_gone', 'tag_one'],
        folder_id: 'fld_x',
        password_hash: 'scrypt$x',
        expires_at: new Date('2030-01-01T00:00:00Z'),
        rules: [{ id: 'r1', match: { country: ['FR'] }, action: { type: 'redirect', url: 'https://example.com/fr' } }] as LinkDoc['rules'],
        ab_test: { enabled: true, variants: [{ url: 'https://example.com/a', weight: 50.5 }, { url: 'https://example.com/b', weight: 49.5 }] },
        moderation: { state: 'warned', reason: 'phishing', report_id: 'rep_1', at: new Date('2026-05-06T07:08:09Z') },
      }),
      aLink({ domain_id: 'dom_custom', domain: 'go.example.com' }),
    ];
    const renderer = new LinkRenderer(BASE);
    for (const doc of docs) {
      const link = renderer.render(BSON.serialize(doc));
      expect(renderer.json(link, tags)).to.equal(expected(doc, tags));
      expect(link).to.include({ id: doc._id });
      expect(link.createdAt.getTime()).to.equal(doc.created_at.getTime());
    }
  });

  it('reuses a rendering only for the same bytes: a link changed in any way is rendered again', () => {
    const renderer = new LinkRenderer(BASE);
    const doc = aLink({ title: 'before' });
    const first = renderer.render(BSON.serialize(doc));
    expect(renderer.render(BSON.serialize(doc))).to.equal(first);
    // Same id, same updated_at: only the bytes tell them apart.
    const changed = { ...doc, title: 'after', moderation: { state: 'disabled' as const, reason: 'malware', report_id: 'rep_2', at: doc.created_at } };
    const second = renderer.render(BSON.serialize(changed));
    expect(renderer.json(second, tags)).to.equal(expected(changed, tags));
    expect(renderer.render(BSON.serialize(doc))).to.not.equal(first);
    expect(renderer.json(renderer.render(BSON.serialize(doc)), tags)).to.equal(expected(doc, tags));
  });

  it('fills in tags as they are now, never as they were when the link was rendered', () => {
    const renderer = new LinkRenderer(BASE);
    const link = renderer.render(BSON.serialize(aLink({ tag_ids: ['tag_one'] })));
    expect(JSON.parse(renderer.json(link, tags)).tags).to.deep.equal([{ id: 'tag_one', name: 'one', color: '#ff0000' }]);
    const renamed = new Map([['tag_one', aTag('tag_one', 'renamed', null)]]);
    expect(JSON.parse(renderer.json(link, renamed)).tags).to.deep.equal([{ id: 'tag_one', name: 'renamed', color: null }]);
    expect(JSON.parse(renderer.json(link, new Map())).tags).to.deep.equal([]);
  });

  it('keeps at most its bound of links, dropping the oldest first', () => {
    const renderer = new LinkRenderer(BASE, 3);
    const bytes = Array.from({ length: 5 }, (_, i) => BSON.serialize(aLink({ _id: `lnk_${i}`, slug: `s${i}` })));
    const rendered = bytes.map((b) => renderer.render(b));
    expect(renderer.size).to.equal(3);
    expect(renderer.render(bytes[4]!)).to.equal(rendered[4]);
    expect(renderer.render(bytes[0]!)).to.not.equal(rendered[0]);
  });

  it('keeps one place per link: a link rendered again after a change does not take a second', () => {
    const renderer = new LinkRenderer(BASE, 2);
    renderer.render(BSON.serialize(aLink({ _id: 'lnk_a', title: 'v1' })));
    renderer.render(BSON.serialize(aLink({ _id: 'lnk_b' })));
    const a2 = renderer.render(BSON.serialize(aLink({ _id: 'lnk_a', title: 'v2' })));
    expect(renderer.size).to.equal(2);
    const b = renderer.render(BSON.serialize(aLink({ _id: 'lnk_b' })));
    expect(renderer.render(BSON.serialize(aLink({ _id: 'lnk_b' })))).to.equal(b);
    expect(renderer.render(BSON.serialize(aLink({ _id: 'lnk_a', title: 'v2' })))).to.equal(a2);
    renderer.render(BSON.serialize(aLink({ _id: 'lnk_c' })));
    expect(renderer.size).to.equal(2);
    expect(renderer.render(BSON.serialize(aLink({ _id: 'lnk_b' })))).to.equal(b);
  });

  it('renders a document whose _id is not its first field, or not a string, every time', () => {
    const renderer = new LinkRenderer(BASE);
    const { _id, ...rest } = aLink();
    const reordered = BSON.serialize({ ...rest, _id });
    const link = renderer.render(reordered);
    expect(renderer.json(link, tags)).to.equal(expected(aLink(), tags));
    expect(renderer.size).to.equal(0);
    expect(renderer.render(reordered)).to.not.equal(link);
  });
});
