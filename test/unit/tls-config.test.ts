import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../src/config/config.ts';
import { backoffAfter, renewAfter } from '../../src/domains/tls-provisioner.ts';

const base = { MONGODB_URI: 'mongodb://db', SECRET_KEY: 'k'.repeat(32) };
const problemsOf = (env: Record<string, string>): string => {
  try {
    loadConfig('worker', { ...base, ...env });
  } catch (error) {
    if (error instanceof ConfigError) return error.problems.join('\n');
    throw error;
  }
  return '';
};

describe('custom domains with TLS without Kubernetes: configuration and lifecycle arithmetic', () => {
  it('is off by default: no ACME, no TLS listener', () => {
    const config = loadConfig('all-in-one', {});
    expect(config.tls.acme).to.equal(null);
    expect(config.tls.port).to.equal(null);
  });

  it('reads the ACME directory, contact, CA file, TLS port, DNS check and renewal point', () => {
    const config = loadConfig('worker', {
      ...base,
      ACME_DIRECTORY_URL: 'https://acme.example/dir',
      ACME_CONTACT_EMAIL: 'ops@example.com',
      TLS_PORT: '8443',
      DOMAIN_A_TARGETS: '203.0.113.10',
      DNS_RESOLVERS: '10.0.0.53:5353,[::1]:53',
      DNS_CHECK_BACKOFF: '1s,5s',
      DNS_GIVE_UP_AFTER: '2h',
      TLS_RENEW_AT_PERCENT: '50',
    });
    expect(config.tls.acme).to.deep.equal({ directoryUrl: 'https://acme.example/dir', contactEmail: 'ops@example.com', caFile: null });
    expect(config.tls.port).to.equal(8443);
    expect(config.tls.dns).to.deep.equal({
      resolvers: [{ host: '10.0.0.53', port: 5353 }, { host: '::1', port: 53 }],
      backoffMs: [1000, 5000],
      giveUpAfterMs: 7_200_000,
    });
    expect(config.tls.renewAtFraction).to.equal(0.5);
    expect(config.tls.sweepIntervalMs).to.equal(10_000);
  });

  it('reads DOMAIN_CNAME_TARGET as DNS compares it, lower case and without the root dot, in every process', () => {
    for (const role of ['api', 'worker', 'all-in-one'] as const) {
      const config = loadConfig(role, { ...base, DOMAIN_CNAME_TARGET: 'Ingress.Example.NET.' });
      expect(config.domains.cnameTarget, role).to.equal('ingress.example.net');
    }
  });

  it('names every inconsistent setting: both provisioners, a TLS port without ACME, no DNS target, bad values', () => {
    const both = problemsOf({ ACME_DIRECTORY_URL: 'https://acme.example/dir', DOMAINS_KUBE: 'in-cluster', DOMAIN_CNAME_TARGET: 'in.example.net' });
    expect(both).to.match(/ACME_DIRECTORY_URL: .*not both/);
    expect(problemsOf({ TLS_PORT: '8443' })).to.match(/TLS_PORT: needs ACME_DIRECTORY_URL/);
    expect(problemsOf({ ACME_DIRECTORY_URL: 'https://acme.example/dir' })).to.match(/DOMAIN_CNAME_TARGET or DOMAIN_A_TARGETS/);
    const bad = problemsOf({
      ACME_DIRECTORY_URL: 'ftp://acme.example/dir',
      ACME_CONTACT_EMAIL: 'nobody',
      ACME_CA_FILE: '/nonexistent/ca.pem',
      DOMAIN_A_TARGETS: '203.0.113.10',
      DNS_RESOLVERS: 'resolver.local',
      TLS_RENEW_AT_PERCENT: '99',
    });
    for (const name of ['ACME_DIRECTORY_URL', 'ACME_CONTACT_EMAIL', 'ACME_CA_FILE', 'DNS_RESOLVERS', 'TLS_RENEW_AT_PERCENT']) expect(bad).to.contain(name);
  });

  it('renews at the configured part of the lifetime, and backs off on the schedule whose last step repeats', () => {
    const from = new Date('2026-01-01T00:00:00Z');
    const to = new Date('2026-04-01T00:00:00Z'); // 90 days
    expect(renewAfter(from, to, 2 / 3).toISOString()).to.equal('2026-03-02T00:00:00.000Z');
    expect(renewAfter(from, new Date(from.getTime() + 60_000), 0.1).getTime() - from.getTime()).to.equal(6_000);
    const schedule = [10, 20, 30];
    expect([0, 1, 2, 3, 4, 9].map((attempts) => backoffAfter(attempts, schedule))).to.deep.equal([10, 10, 20, 30, 30, 30]);
    expect(backoffAfter(3, [])).to.equal(0);
  });
});
