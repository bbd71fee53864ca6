// How one source link becomes a create body (src/imports/import-mapping.ts) and which hosts are a service's own.
import { expect } from 'chai';
import { mapLink, suffixed, tagNamesOf } from '../../src/imports/import-mapping.ts';
import { isSharedHost } from '../../src/imports/source-registry.ts';
import { importedLink } from '../../src/imports/sources/link-fields.ts';
import { ValidationError } from '../../src/platform/errors.ts';

const aLink = (fields: Partial<ReturnType<typeof importedLink>> = {}) => ({ ...importedLink('src-1', 'https://example.com/a'), ...fields });

describe('import mapping', () => {
  it('keeps the slug, cuts the title, turns iOS and Android destinations into OS targeting ahead of the source targeting', () => {
    const { input, generatedSlug } = mapLink(
      aLink({
        slug: 'launch',
        title: 'x'.repeat(250),
        ios: 'https://apps.apple.com/app/1',
        android: 'https://play.google.com/store/apps/details?id=a',
        targeting: [{ match: { country: ['DE'] }, url: 'https://example.de/' }],
        expiresAt: new Date('2027-03-01T00:00:00Z'),
        utm: { utm_source: 'news' },
      }),
      'dom_default',
      ['tag_1'],
    );
    expect(generatedSlug).to.equal(false);
    expect(input).to.deep.include({ slug: 'launch', domain_id: 'dom_default', tag_ids: ['tag_1'], expires_at: '2027-03-01T00:00:00.000Z', utm: { utm_source: 'news' } });
    expect(input.title).to.have.length(200);
    expect(input.targeting).to.deep.equal([
      { match: { os: ['ios'] }, url: 'https://apps.apple.com/app/1' },
      { match: { os: ['android'] }, url: 'https://play.google.com/store/apps/details?id=a' },
      { match: { country: ['DE'] }, url: 'https://example.de/' },
    ]);
  });

  it('generates a slug for a link without one, and refuses a slug our links cannot have', () => {
    const generated = mapLink(aLink(), 'dom_default', []);
    expect(generated.generatedSlug).to.equal(true);
    expect(generated.input.slug).to.match(/^[0-9A-Za-z]{7}$/);
    expect(() => mapLink(aLink({ slug: 'a/b' }), 'dom_default', [])).to.throw(ValidationError);
  });

  it('suffixes a slug within 100 characters, and keeps 20 distinct tag names of at most 50 characters', () => {
    expect(suffixed('launch', 1)).to.equal('launch-2');
    expect(suffixed('s'.repeat(100), 2)).to.equal(`${'s'.repeat(98)}-3`);
    const names = tagNamesOf(aLink({ tags: [' a ', 'a', '', 'b'.repeat(60), ...Array.from({ length: 30 }, (_, i) => `t${i}`)] }));
    expect(names.slice(0, 2)).to.deep.equal(['a', 'b'.repeat(50)]);
    expect(names).to.have.length(20);
  });

  it("knows the services' shared domains, Short.io's subdomains included, and nothing of self-hosted ones", () => {
    expect(isSharedHost('bitly', 'bit.ly')).to.equal(true);
    expect(isSharedHost('bitly', 'go.example.com')).to.equal(false);
    expect(isSharedHost('shortio', 'acme.short.gy')).to.equal(true);
    expect(isSharedHost('dub', 'DUB.SH')).to.equal(true);
    expect(isSharedHost('shlink', 'bit.ly')).to.equal(false);
  });
});
