import { expect } from 'chai';
import { SourceError, type SourceHttpAnswer } from '../../src/imports/source.ts';
import { decodeCursor, encodeCursor } from '../../src/imports/sources/cursor.ts';
import { countryTargeting, httpUrl, sourceDate, tagNames, utmOf, UTM_NAMES } from '../../src/imports/sources/link-fields.ts';
import { rateLimitWaitMs } from '../../src/imports/sources/rate-limit-headers.ts';
import { ANCHOR_GONE, anchorsOf, readAfterAnchors } from '../../src/imports/sources/resume-anchors.ts';
import { remoteOptions } from '../../src/imports/sources/source-options.ts';

const isPair = (state: unknown): state is { a: string } => typeof state === 'object' && state !== null && typeof (state as { a?: unknown }).a === 'string';
const limited = (headers: Record<string, string>): SourceHttpAnswer => ({ status: 429, headers, body: '' });

describe('import sources: shared reading', () => {
  it('gives back the cursor state it wrote, and refuses a cursor of another source or shape as input', () => {
    expect(decodeCursor('dub', encodeCursor('dub', { a: 'x' }), isPair)).to.deep.equal({ a: 'x' });
    for (const cursor of [encodeCursor('bitly', { a: 'x' }), encodeCursor('dub', { b: 1 }), 'not base64 json', '']) {
      const error = (() => {
        try {
          decodeCursor('dub', cursor, isPair);
        } catch (e) {
          return e;
        }
      })();
      expect(error).to.be.instanceOf(SourceError).with.property('kind', 'input');
    }
  });

  it('reads a rate-limit wait from Retry-After, else X-RateLimit-Reset, as a delay or an epoch by its size', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(rateLimitWaitMs(limited({ 'retry-after': '12' }), now)).to.equal(12_000);
    expect(rateLimitWaitMs(limited({ 'retry-after': 'Thu, 01 Jan 2026 00:00:30 GMT' }), now)).to.equal(30_000);
    expect(rateLimitWaitMs(limited({ 'retry-after': String(now / 1000 + 20) }), now)).to.equal(20_000);
    expect(rateLimitWaitMs(limited({ 'retry-after': String(now + 5_000) }), now)).to.equal(5_000);
    expect(rateLimitWaitMs(limited({ 'x-ratelimit-reset': String(now / 1000 + 45) }), now)).to.equal(45_000);
    expect(rateLimitWaitMs(limited({ 'x-ratelimit-reset': '3' }), now)).to.equal(3_000);
    // a reset already past still waits a second rather than retrying at once
    expect(rateLimitWaitMs(limited({ 'x-ratelimit-reset': String(now / 1000 - 10) }), now)).to.equal(1_000);
    expect(rateLimitWaitMs(limited({ 'retry-after': 'later' }), now)).to.equal(null);
    expect(rateLimitWaitMs(limited({}), now)).to.equal(null);
  });

  it('takes only absolute http(s) destinations', () => {
    expect(httpUrl('https://example.com/a?b=1')).to.equal('https://example.com/a?b=1');
    expect(httpUrl('http://example.com')).to.equal('http://example.com');
    for (const bad of ['example.com/a', 'javascript:alert(1)', 'ftp://example.com', '', '   ', 42, null, undefined]) expect(httpUrl(bad)).to.equal(null);
  });

  it('reads dates as ISO 8601 (Bitly offsets without a colon too) or epoch milliseconds', () => {
    const expected = new Date('2025-03-01T09:30:00Z');
    for (const given of ['2025-03-01T09:30:00Z', '2025-03-01T09:30:00+0000', '2025-03-01T11:30:00+0200', '2025-03-01T09:30:00.000+00:00', expected.getTime(), String(expected.getTime())]) {
      expect(sourceDate(given), String(given)).to.deep.equal(expected);
    }
    for (const bad of ['yesterday', '', null, {}]) expect(sourceDate(bad)).to.equal(null);
  });

  it('reads tag names from strings or named objects, without blanks or repeats', () => {
    expect(tagNames(['a', { name: 'b', id: 't1' }, '', 'a', { color: 'red' }, 7])).to.deep.equal(['a', 'b']);
    expect(tagNames(null)).to.deep.equal([]);
  });

  it('keeps only the UTM parameters given, and none at all as null', () => {
    expect(utmOf({ utm_source: 'news', utm_medium: null, utm_campaign: '', utm_content: 'hero' }, UTM_NAMES)).to.deep.equal({ utm_source: 'news', utm_content: 'hero' });
    expect(utmOf({ utmSource: 'news', utm_source: 'ignored' }, { ...UTM_NAMES, utm_source: 'utmSource' })).to.deep.equal({ utm_source: 'news' });
    expect(utmOf({ utm_source: null, utm_medium: 7 }, UTM_NAMES)).to.equal(null);
  });

  it('turns a country map into one targeting entry per destination, within our 50 countries an entry', () => {
    expect(countryTargeting({ US: 'https://example.com/us', CA: 'https://example.com/us', de: 'https://example.com/de', XYZ: 'https://example.com/x', FR: 'not a url' })).to.deep.equal([
      { match: { country: ['US', 'CA'] }, url: 'https://example.com/us' },
      { match: { country: ['DE'] }, url: 'https://example.com/de' },
    ]);
    const many = Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`${String.fromCharCode(65 + Math.floor(i / 26))}${String.fromCharCode(65 + (i % 26))}`, 'https://example.com/all']));
    expect(countryTargeting(many).map((entry) => entry.match.country!.length)).to.deep.equal([50, 10]);
  });

  it('resumes after the newest anchor the service still knows, and fails as input when none is left', async () => {
    const known = new Set(['a', 'b']);
    const tried: Array<string | null> = [];
    const read = (after: string | null) => {
      tried.push(after);
      return Promise.resolve(after === null || known.has(after) ? `after ${after}` : ANCHOR_GONE);
    };
    expect(await readAfterAnchors('dub', ['a', 'b', 'c', 'd'], read)).to.equal('after b');
    expect(tried).to.deep.equal(['d', 'c', 'b']);
    expect(await readAfterAnchors('dub', [], read)).to.equal('after null');
    const error = await readAfterAnchors('dub', ['x', 'y'], read).catch((e: unknown) => e);
    expect(error).to.be.instanceOf(SourceError).with.property('kind', 'input');
    expect(anchorsOf(Array.from({ length: 12 }, (_, i) => ({ id: i === 11 ? null : `id${i}` })), (row) => (row as { id: string | null }).id)).to.deep.equal(
      ['id1', 'id2', 'id3', 'id4', 'id5', 'id6', 'id7', 'id8', 'id9', 'id10'],
    );
  });

  it('refuses a source without a token, with a base URL that is not http(s), or with options it does not know', () => {
    const base = { token: 't', baseUrl: null, params: {}, file: null };
    expect(remoteOptions('dub', base, 'https://api.dub.co/', [])).to.deep.equal({ token: 't', baseUrl: 'https://api.dub.co', params: {} });
    expect(() => remoteOptions('dub', { ...base, token: null }, 'https://api.dub.co', [])).to.throw(SourceError, 'needs an API token');
    expect(() => remoteOptions('dub', { ...base, baseUrl: 'file:///etc' }, 'https://api.dub.co', [])).to.throw(SourceError, 'base URL');
    expect(() => remoteOptions('dub', { ...base, params: { folder: 'x' } }, 'https://api.dub.co', ['domain'])).to.throw(SourceError, 'no option folder (it takes domain)');
  });
});
