// The `csv` import source reads our own export and a CSV made by hand (a spreadsheet's: a url column and what else it
// has), which is what the links list's Import CSV leads to (docs/importing/export.md).
import { expect } from 'chai';
import { createCsvSource } from '../../src/imports/sources/csv.ts';

const signal = new AbortController().signal;
const read = (file: string) => createCsvSource({ token: null, baseUrl: null, params: {}, file }).page(null, signal);

describe('import source: CSV', () => {
  it('reads a hand-made CSV: url required, the other columns when present, tags as names', async () => {
    const page = await read(
      [
        'url,slug,title,domain,tags,expires_at,utm_source',
        'https://example.com/a,spring,Spring sale,Go.Example.com,"promo, season",2027-01-01T00:00:00Z,news',
        'https://example.com/b,,,,promo|other,,',
        'not a url,bad,,,,,',
      ].join('\n'),
    );
    expect(page.errors).to.deep.equal([{ ref: 'row 4', message: 'the url column is not an absolute http(s) URL' }]);
    expect(page.links).to.have.length(2);
    expect(page.links[0]).to.deep.include({
      sourceId: 'go.example.com/spring',
      url: 'https://example.com/a',
      domain: 'go.example.com',
      slug: 'spring',
      title: 'Spring sale',
      tags: ['promo', 'season'],
      expiresAt: new Date('2027-01-01T00:00:00Z'),
      utm: { utm_source: 'news' },
    });
    // No slug: the row number and the URL name it, so the same file imported again is still recognised.
    expect(page.links[1]).to.deep.include({ sourceId: 'row 3: https://example.com/b', domain: null, slug: null, tags: ['promo', 'other'] });
  });

  it('reads our export: the id as the source id, its default domain as ours, JSON tags, the imported click total', async () => {
    const imported = JSON.stringify({ source: 'bitly', source_id: 'bit.ly/x', job_id: 'imp_1', clicks_total: 42, imported_at: '2026-01-01T00:00:00.000Z' }).replaceAll('"', '""');
    const page = await read(['id,domain_id,domain,slug,url,tags,imported', `lnk_1,dom_default,lnk.other.test,x,https://example.com/x,"[""a""]","${imported}"`].join('\n'));
    expect(page.links[0]).to.deep.include({ sourceId: 'lnk_1', domain: null, slug: 'x', tags: ['a'], clicksTotal: 42 });
  });

  it('refuses a file without a url column, naming it', () => {
    expect(() => read('slug,title\nx,y')).to.throw('no url column');
  });
});
