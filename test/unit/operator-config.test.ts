import { expect } from 'chai';
import { ConfigError } from '../../src/config/config.ts';
import { loadOperatorConfig, parseResolver } from '../../src/config/operator.ts';

const MINIMAL = { POD_NAMESPACE: 'linkplane', INGRESS_SERVICE_NAME: 'linkplane-redirect', DOMAIN_CNAME_TARGET: 'ingress.linkplane.io' };

describe('operator config', () => {
  it('fills the documented defaults', () => {
    const config = loadOperatorConfig({ ...MINIMAL, POD_NAME: 'op-0' });
    expect(config.identity).to.equal('op-0');
    expect(config.namespace).to.equal('linkplane');
    expect(config.certificate).to.deep.equal({ issuerName: 'letsencrypt', issuerKind: 'ClusterIssuer' });
    expect(config.ingress).to.deep.equal({ className: 'nginx', serviceName: 'linkplane-redirect', servicePort: 8081 });
    expect(config.dns.backoffMs).to.deep.equal([10_000, 30_000, 60_000, 300_000, 900_000]);
    expect(config.dns.giveUpAfterMs).to.equal(72 * 3_600_000);
    expect(config.dns.txtPrefix).to.equal('_linkplane');
    expect(config.dns.resolvers).to.deep.equal([]);
    expect(config.lease).to.deep.equal({ name: 'linkplane-operator', durationMs: 15_000, renewMs: 5000 });
    expect(config.metricsPort).to.equal(8083);
    expect(Object.isFrozen(config.dns)).to.equal(true);
  });

  it('prefers OPERATOR_NAMESPACE and reads resolvers with ports', () => {
    const config = loadOperatorConfig({ ...MINIMAL, OPERATOR_NAMESPACE: 'domains', DNS_RESOLVERS: '10.0.0.53, 127.0.0.1:5353,[::1]:53' });
    expect(config.namespace).to.equal('domains');
    expect(config.dns.resolvers).to.deep.equal([
      { host: '10.0.0.53', port: 53 },
      { host: '127.0.0.1', port: 5353 },
      { host: '::1', port: 53 },
    ]);
  });

  it('names every bad variable at once', () => {
    let error: unknown;
    try {
      loadOperatorConfig({
        DNS_RESOLVERS: 'dns.example.com',
        DNS_CHECK_BACKOFF: '10s,soon',
        DNS_GIVE_UP_AFTER: 'forever',
        DOMAIN_A_TARGETS: '300.1.1.1',
        CERT_ISSUER_KIND: 'Vault',
        LEASE_DURATION_MS: '1000',
        LEASE_RENEW_MS: '2000',
        OPERATOR_METRICS_PORT: 'eighty',
      });
    } catch (e) {
      error = e;
    }
    expect(error).to.be.instanceOf(ConfigError);
    const problems = (error as ConfigError).problems.join('\n');
    for (const name of ['DNS_RESOLVERS', 'DNS_CHECK_BACKOFF', 'DNS_GIVE_UP_AFTER', 'DOMAIN_A_TARGETS', 'CERT_ISSUER_KIND', 'LEASE_RENEW_MS', 'OPERATOR_METRICS_PORT', 'INGRESS_SERVICE_NAME', 'POD_NAMESPACE']) {
      expect(problems).to.contain(name);
    }
  });

  it('refuses resolvers that are names or out-of-range ports', () => {
    expect(parseResolver('resolver.local')).to.equal(null);
    expect(parseResolver('10.0.0.1:70000')).to.equal(null);
    expect(parseResolver('10.0.0.1:5353')).to.deep.equal({ host: '10.0.0.1', port: 5353 });
  });
});
