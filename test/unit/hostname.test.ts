import { expect } from 'chai';
import { normaliseHostname, type HostnamePolicy } from '../../src/domains/hostname.ts';
import { dnsRecords } from '../../src/domains/domain.service.ts';
import { ValidationError } from '../../src/platform/errors.ts';

const policy: HostnamePolicy = { reserved: ['lnk.linkplane.io', 'api.linkplane.io:443', 'ingress.linkplane.io'] };

/** The message of the single `hostname` detail of the ValidationError the input is refused with. */
function refusal(input: string): string {
  try {
    normaliseHostname(input, policy);
  } catch (error) {
    expect(error).to.be.instanceOf(ValidationError);
    const details = (error as ValidationError).details!;
    expect(details).to.have.length(1);
    expect(details[0]!.path).to.equal('hostname');
    return details[0]!.message;
  }
  throw new Error(`"${input}" was accepted`);
}

describe('custom domain hostname rules', () => {
  describe('accepted, in canonical form', () => {
    const accepted: Array<[string, string, string, boolean]> = [
      // input, canonical hostname, registrable domain, apex
      ['links.acme.com', 'links.acme.com', 'acme.com', false],
      ['acme.com', 'acme.com', 'acme.com', true],
      ['  Links.ACME.com.  ', 'links.acme.com', 'acme.com', false],
      ['go.acme.co.uk', 'go.acme.co.uk', 'acme.co.uk', false],
      ['bücher.example', 'xn--bcher-kva.example', 'xn--bcher-kva.example', true],
      ['shop.BÜCHER.example', 'shop.xn--bcher-kva.example', 'xn--bcher-kva.example', false],
      ['xn--bcher-kva.example', 'xn--bcher-kva.example', 'xn--bcher-kva.example', true],
      ['my-links.acme.io', 'my-links.acme.io', 'acme.io', false],
      // Shares a suffix with our domain without being under it.
      ['notlinkplane.io', 'notlinkplane.io', 'notlinkplane.io', true],
    ];
    for (const [input, hostname, registrable, apex] of accepted) {
      it(`accepts "${input}" as ${hostname}${apex ? ' (apex)' : ''}`, () => {
        expect(normaliseHostname(input, policy)).to.deep.equal({ hostname, registrable, apex });
      });
    }

    it('accepts a name of exactly 253 characters', () => {
      const name = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(57)}.com`;
      expect(name).to.have.length(253);
      expect(normaliseHostname(name, policy).hostname).to.equal(name);
    });
  });

  describe('refused with 422 naming hostname', () => {
    const refused: Array<[string, RegExp]> = [
      ['', /empty/],
      ['.', /empty/],
      ['93.184.215.14', /not an IP address/],
      ['[2001:db8::1]', /not an IP address/],
      ['2001:db8::1', /not an IP address/],
      ['localhost', /local/],
      ['app.localhost', /local/],
      ['printer.local', /local/],
      ['svc.cluster.internal', /local/],
      ['com', /public suffix/],
      ['co.uk', /public suffix/],
      ['lnk.linkplane.io', /our own/],
      ['a.lnk.linkplane.io', /our own/],
      ['API.linkplane.io.', /our own/],
      ['ingress.linkplane.io', /our own/],
      ['under_score.acme.com', /label "under_score"/],
      ['-dash.acme.com', /label "-dash"/],
      ['a..acme.com', /label ""/],
      ['https://acme.com', /bare hostname/],
      ['acme.com/path', /bare hostname/],
      ['acme.com:8080', /bare hostname/],
      ['my links.acme.com', /bare hostname/],
      ['1.2.3', /not an IP address/],
      [`${'a'.repeat(64)}.acme.com`, /1 to 63/],
    ];
    for (const [input, message] of refused) {
      it(`refuses "${input.length > 40 ? `${input.slice(0, 20)}…` : input}"`, () => {
        expect(refusal(input)).to.match(message);
      });
    }

    it('refuses a name over 253 characters, counted in punycode', () => {
      const name = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(58)}.com`;
      expect(name).to.have.length(254);
      expect(refusal(name)).to.match(/at most 253/);
    });
  });

  describe('DNS records to set', () => {
    const targets = { cnameTarget: 'ingress.linkplane.io', aTargets: ['203.0.113.10', '203.0.113.11'], txtPrefix: '_linkplane' };

    it('asks a subdomain for the TXT token and a CNAME to the ingress', () => {
      expect(dnsRecords(normaliseHostname('links.acme.com', policy), 'tok', targets)).to.deep.equal([
        { type: 'TXT', name: '_linkplane.links.acme.com', value: 'linkplane-verify=tok' },
        { type: 'CNAME', name: 'links.acme.com', value: 'ingress.linkplane.io' },
      ]);
    });

    it('asks an apex domain for A records, since it cannot hold a CNAME', () => {
      expect(dnsRecords(normaliseHostname('acme.com', policy), 'tok', targets)).to.deep.equal([
        { type: 'TXT', name: '_linkplane.acme.com', value: 'linkplane-verify=tok' },
        { type: 'A', name: 'acme.com', value: '203.0.113.10' },
        { type: 'A', name: 'acme.com', value: '203.0.113.11' },
      ]);
    });

    it('falls back to a flattened CNAME at the apex when no A targets are configured', () => {
      const [, cname] = dnsRecords(normaliseHostname('acme.com', policy), 'tok', { ...targets, aTargets: [] });
      expect(cname).to.include({ type: 'CNAME', name: 'acme.com', value: 'ingress.linkplane.io' });
      expect(cname!.note).to.match(/ALIAS|flatten/);
    });

    it('gives A records to a subdomain when only A targets are configured', () => {
      const records = dnsRecords(normaliseHostname('links.acme.com', policy), 'tok', { ...targets, cnameTarget: null });
      expect(records.map((r) => r.type)).to.deep.equal(['TXT', 'A', 'A']);
    });
  });
});
