// The link editor's translation between what a person edits and what the Links API takes (web/src/screens/links):
// a create sends only what was filled in, an update only what changed, and error paths name draft fields.
import { expect } from 'chai';
import { createBody, draftOf, emptyDraft, parseList, updateBody, type LinkDraft } from '../../web/src/screens/links/link-draft.ts';
import { parseBulkCsv } from '../../web/src/screens/links/bulk-rows.ts';
import type { Link } from '../../web/src/screens/links/link-types.ts';

function aLink(overrides: Partial<Link> = {}): Link {
  return {
    id: 'lnk_1',
    short_url: 'https://lp.example/spring',
    domain_id: 'dom_default',
    domain: 'lp.example',
    slug: 'spring',
    url: 'https://example.com/',
    title: 'Spring',
    note: null,
    folder_id: null,
    tags: [{ id: 'tag_a', name: 'promo', color: null }],
    redirect_type: 302,
    expires_at: null,
    expired_url: null,
    has_password: true,
    targeting: [],
    ab_test: null,
    rules: [{ id: 'r1', enabled: true, invert: false, match: { device: ['mobile'] }, action: { type: 'redirect', url: 'https://m.example.com/' } }],
    workspace_rules_off: false,
    mobile: null,
    rotator: null,
    preview: null,
    destination_preview: null,
    archived: false,
    imported: null,
    created_at: '2026-01-01T00:00:00Z',
    updated_at: '2026-01-01T00:00:00Z',
    ...overrides,
  };
}

describe('Dashboard link editor: drafts to API bodies', () => {
  it('sends a custom social card only with a title, clears it when the title is emptied, and leaves it alone otherwise', () => {
    const draft: LinkDraft = { ...emptyDraft(), url: 'https://example.com/a', preview: { title: ' Spring ', description: '', image: 'https://cdn.example.com/a.png' } };
    expect(createBody(draft).preview).to.deep.equal({ title: 'Spring', description: null, image: 'https://cdn.example.com/a.png' });
    expect(createBody({ ...draft, preview: { title: '  ', description: 'ignored', image: '' } })).not.to.have.property('preview');
    const original = draftOf(aLink({ preview: { title: 'Old', description: 'd', image: null } }));
    expect(original.preview).to.deep.equal({ title: 'Old', description: 'd', image: '' });
    expect(updateBody({ ...original, note: 'x' }, original)).not.to.have.property('preview');
    expect(updateBody({ ...original, preview: { ...original.preview, title: '' } }, original).preview).to.equal(null);
  });

  it('creates with only the fields filled in, UTM parameters and a password included', () => {
    const draft: LinkDraft = { ...emptyDraft(), url: ' https://example.com/a ', slug: 'a', password: 'sesame', utm: { ...emptyDraft().utm, utm_source: 'news' } };
    expect(createBody(draft)).to.deep.equal({ url: 'https://example.com/a', slug: 'a', redirect_type: 302, password: 'sesame', utm: { utm_source: 'news' } });
  });

  it('shows the main URL’s UTM parameters apart, and the destinations without the ones they share with it', () => {
    const draft = draftOf(
      aLink({
        url: 'https://example.com/p?a=1&utm_source=news&utm_campaign=fall',
        ab_test: { enabled: true, variants: [{ url: 'https://example.com/a?utm_source=news&utm_content=hero', weight: 1 }, { url: 'https://example.com/b?utm_source=news&utm_campaign=fall', weight: 1 }] },
      }),
    );
    expect(draft.url).to.equal('https://example.com/p?a=1');
    expect(draft.utm).to.deep.equal({ utm_source: 'news', utm_medium: '', utm_campaign: 'fall', utm_term: '', utm_content: '' });
    expect(draft.ab_test!.variants.map((v) => v.url)).to.deep.equal(['https://example.com/a?utm_content=hero', 'https://example.com/b']);
  });

  it('sends every destination with the UTM when it changed, and the UTM with any destination sent', () => {
    const link = aLink({
      url: 'https://example.com/p?utm_source=news',
      ab_test: { enabled: true, variants: [{ url: 'https://example.com/a?utm_source=news', weight: 1 }, { url: 'https://example.com/b?utm_source=news', weight: 1 }] },
    });
    const original = draftOf(link);
    expect(updateBody({ ...original, title: 'Other' }, original)).to.deep.equal({ title: 'Other' });
    const changed = updateBody({ ...original, utm: { ...original.utm, utm_source: 'ads', utm_medium: 'cpc' } }, original);
    expect(changed.utm).to.deep.equal({ utm_source: 'ads', utm_medium: 'cpc' });
    expect(changed.url).to.equal('https://example.com/p');
    expect((changed.ab_test as { variants: { url: string }[] }).variants.map((v) => v.url)).to.deep.equal(['https://example.com/a', 'https://example.com/b']);
    expect(changed.rules).to.have.length(1);
    const moved = updateBody({ ...original, url: 'https://example.com/q' }, original);
    expect(moved).to.deep.equal({ url: 'https://example.com/q', utm: { utm_source: 'news' } });
    const cleared = updateBody({ ...original, utm: emptyDraft().utm }, original);
    expect(cleared.url).to.equal('https://example.com/p');
    expect(cleared).not.to.have.property('utm');
  });

  it('drops empty optional fields inside rules and mobile apps, keeping the rule order', () => {
    const draft: LinkDraft = {
      ...emptyDraft(),
      url: 'https://example.com/',
      rules: [
        { key: 'k1', enabled: true, invert: false, label: '', match: { country: [], user_agent: 'bot' }, action: { type: 'page', title: 'Hi', text: '' } },
        { key: 'k2', enabled: false, invert: true, match: {}, action: { type: 'block', status: 410 } },
      ],
      mobile: { enabled: true, ios: { app_url: 'app://x', store_url: '' }, android: { app_url: '' }, tablet: 'mobile', in_app: 'attempt', delay_ms: 1600, deferred: false },
    };
    const body = createBody(draft);
    expect(body.rules).to.deep.equal([
      { enabled: true, invert: false, match: { user_agent: 'bot' }, action: { type: 'page', title: 'Hi' } },
      { enabled: false, invert: true, match: {}, action: { type: 'block', status: 410 } },
    ]);
    expect(body.mobile).to.deep.equal({ enabled: true, ios: { app_url: 'app://x' }, tablet: 'mobile', in_app: 'attempt', delay_ms: 1600, deferred: false });
  });

  it('updates only what changed, with null to clear a field and the rule ids kept', () => {
    const original = draftOf(aLink());
    const draft: LinkDraft = { ...original, title: '', rules: original.rules.map((r) => ({ ...r, enabled: false })) };
    expect(updateBody(draft, original)).to.deep.equal({
      title: null,
      rules: [{ id: 'r1', enabled: false, invert: false, match: { device: ['mobile'] }, action: { type: 'redirect', url: 'https://m.example.com/' } }],
    });
  });

  it('sends nothing for an untouched link, and null to remove a password only when asked', () => {
    const original = draftOf(aLink());
    expect(updateBody(original, original)).to.deep.equal({});
    expect(updateBody({ ...original, remove_password: true }, original)).to.deep.equal({ password: null });
    expect(updateBody({ ...original, password: 'new one' }, original)).to.deep.equal({ password: 'new one' });
  });

  it('splits typed lists on commas and new lines, keeping spaces inside items', () => {
    expect(parseList('us, de;\nNew York, ', (s) => s)).to.deep.equal(['us', 'de', 'New York']);
    expect(parseList('us,de', (s) => s.toUpperCase())).to.deep.equal(['US', 'DE']);
  });
});

describe('Dashboard CSV import: rows to link bodies', () => {
  const lookups = {
    domains: [{ id: 'dom_x', hostname: 'go.acme.example', status: 'active', default: false }],
    tags: [{ id: 'tag_a', name: 'Promo', color: null }],
    folders: [{ id: 'fld_1', name: 'Spring' }],
  };

  it('maps named columns, resolving domain, tags and folder by name', () => {
    const csv = 'URL,slug,domain,tags,folder,utm_source,redirect_type\r\nhttps://example.com/a,a,go.acme.example,promo|PROMO,spring,news,301\r\n';
    const { rows, problems, unknownColumns } = parseBulkCsv(csv, lookups);
    expect(problems).to.deep.equal([]);
    expect(unknownColumns).to.deep.equal([]);
    expect(rows).to.have.length(1);
    expect(rows[0]!.errors).to.deep.equal([]);
    expect(rows[0]!.body).to.deep.equal({ url: 'https://example.com/a', slug: 'a', domain_id: 'dom_x', tag_ids: ['tag_a'], folder_id: 'fld_1', redirect_type: 301, utm: { utm_source: 'news' } });
  });

  it('reports each row its own problems, with the line a spreadsheet shows', () => {
    const csv = 'url,title,tags\nftp://example.com/x,"Quoted, with comma",\nhttps://example.com/y,,nope\n,,\n\n,Untitled,\nhttps://example.com/z,Z,';
    const { rows, problems } = parseBulkCsv(csv, lookups);
    expect(problems).to.deep.equal([]);
    // Blank lines (4 and 5) are no rows, and the lines after them keep their numbers.
    expect(rows.map((r) => [r.line, r.errors])).to.deep.equal([
      [2, ['url "ftp://example.com/x" is not an http(s) URL']],
      [3, ['tag "nope" does not exist']],
      [6, ['url is empty']],
      [7, []],
    ]);
    expect(rows[0]!.values.title).to.equal('Quoted, with comma');
  });

  it('names the line of broken quoting', () => {
    expect(parseBulkCsv('url,title\nhttps://example.com/1,"unclosed', lookups).problems).to.have.length(1).and.satisfy((p: string[]) => p[0]!.startsWith('line 2: '));
  });

  it('reads a bare list of URLs without a header, and refuses a table without a url column', () => {
    expect(parseBulkCsv('https://example.com/1\nhttps://example.com/2', lookups).rows.map((r) => r.body.url)).to.deep.equal(['https://example.com/1', 'https://example.com/2']);
    expect(parseBulkCsv('link,slug\nhttps://example.com/1,a', lookups).problems).to.deep.equal(['The first line must name the columns, one of them "url".']);
  });
});
