import { expect } from 'chai';
import { createHmac } from 'node:crypto';
import { signPayload, verifySignature } from '../../src/webhooks/signature.ts';
import { assertPublicTarget, refusalOf, UnsafeTargetError } from '../../src/platform/outbound/ssrf.ts';
import { outboundAgents, send, type OutboundError } from '../../src/platform/outbound/outbound.ts';
import { SecretBox, newSigningSecret } from '../../src/webhooks/secret-box.ts';
import { capBody } from '../../src/webhooks/delivery.store.ts';
import { ConfigError, loadConfig } from '../../src/config/config.ts';

const SECRET = 'whsec_test_secret_one';
const OTHER = 'whsec_test_secret_two';
const BODY = '{"id":"dlv_1","type":"link.created","created_at":"2026-01-01T00:00:00.000Z","data":{"id":"lnk_1"}}';
const T = 1_767_225_600;

describe('webhook signature (spec 6.3)', () => {
  it('signs as t=<unix>,v1=<hex> with an HMAC-SHA256 over "<t>.<raw body>" that an independent computation matches', () => {
    const header = signPayload(BODY, [SECRET], T);
    const independent = createHmac('sha256', SECRET).update(`${T}.${BODY}`).digest('hex');
    expect(header).to.equal(`t=${T},v1=${independent}`);
  });

  it('verifies its own signature, from a string or a Buffer body', () => {
    const header = signPayload(BODY, [SECRET], T);
    expect(verifySignature(BODY, header, SECRET, { now: T + 10 })).to.deep.equal({ valid: true, timestamp: T });
    expect(verifySignature(Buffer.from(BODY), header, SECRET, { now: T }).valid).to.equal(true);
  });

  it('rejects a tampered body and a wrong secret', () => {
    const header = signPayload(BODY, [SECRET], T);
    expect(verifySignature(BODY.replace('lnk_1', 'lnk_2'), header, SECRET, { now: T })).to.deep.equal({ valid: false, reason: 'no_matching_signature' });
    expect(verifySignature(BODY, header, OTHER, { now: T })).to.deep.equal({ valid: false, reason: 'no_matching_signature' });
  });

  it('rejects a timestamp older than the 300 s tolerance and one far in the future', () => {
    const header = signPayload(BODY, [SECRET], T);
    expect(verifySignature(BODY, header, SECRET, { now: T + 300 }).valid).to.equal(true);
    expect(verifySignature(BODY, header, SECRET, { now: T + 301 })).to.deep.equal({ valid: false, reason: 'timestamp_too_old' });
    expect(verifySignature(BODY, header, SECRET, { now: T - 301 })).to.deep.equal({ valid: false, reason: 'timestamp_in_future' });
    expect(verifySignature(BODY, header, SECRET, { now: T + 1000, toleranceSeconds: 1200 }).valid).to.equal(true);
  });

  it('rejects malformed headers', () => {
    const v1 = createHmac('sha256', SECRET).update(`${T}.${BODY}`).digest('hex');
    for (const header of [undefined, '', 'garbage', `v1=${v1}`, `t=${T}`, `t=abc,v1=${v1}`, `t=${T},v1=zz`, `t=${T},v1=${v1.slice(2)}`, `t=${T},t=${T},v1=${v1}`]) {
      expect(verifySignature(BODY, header, SECRET, { now: T }), String(header)).to.deep.equal({ valid: false, reason: 'malformed_header' });
    }
  });

  it('carries one v1 per secret during a rotation, and a receiver holding either secret verifies', () => {
    const header = signPayload(BODY, [SECRET, OTHER], T);
    expect(header.split(',').filter((part) => part.startsWith('v1='))).to.have.length(2);
    expect(verifySignature(BODY, header, SECRET, { now: T }).valid).to.equal(true);
    expect(verifySignature(BODY, header, OTHER, { now: T }).valid).to.equal(true);
    expect(verifySignature(BODY, header, 'whsec_third', { now: T }).valid).to.equal(false);
  });

  it('ignores signature schemes it does not know, so a future v2 does not break receivers', () => {
    const header = `${signPayload(BODY, [SECRET], T)},v2=abcdef`;
    expect(verifySignature(BODY, header, SECRET, { now: T }).valid).to.equal(true);
  });
});

describe('webhook SSRF guard', () => {
  const refused: Array<[string, string]> = [
    ['http://127.0.0.1:9/x', 'loopback'],
    ['http://127.8.9.10/x', 'loopback'],
    ['http://[::1]/x', 'loopback'],
    ['http://10.1.2.3/x', 'private'],
    ['http://172.16.0.1/x', 'private'],
    ['http://172.31.255.255/x', 'private'],
    ['http://192.168.1.1/x', 'private'],
    ['http://[fc00::1]/x', 'private'],
    ['http://[fd12:3456::1]/x', 'private'],
    ['http://169.254.1.1/x', 'link-local'],
    ['http://[fe80::1]/x', 'link-local'],
    ['http://100.64.0.1/x', 'CGNAT'],
    ['http://100.127.255.254/x', 'CGNAT'],
    ['http://0.0.0.0/x', 'unspecified'],
    ['http://[::]/x', 'unspecified'],
    ['http://224.0.0.1/x', 'multicast'],
    ['http://[ff02::1]/x', 'multicast'],
    ['http://169.254.169.254/latest/meta-data', 'metadata'],
    ['http://[fd00:ec2::254]/x', 'metadata'],
    ['http://[::ffff:127.0.0.1]/x', 'loopback'],
    ['http://[::ffff:a9fe:a9fe]/x', 'metadata'],
    ['http://[::ffff:10.0.0.1]/x', 'private'],
    ['http://2130706433/x', 'loopback'],
    ['http://0x7f.1/x', 'loopback'],
    // IPv6 transition forms that carry an IPv4 address: judged by it.
    ['http://[64:ff9b::7f00:1]/x', 'loopback address (127.0.0.1) in NAT64 form'],
    ['http://[64:ff9b::a9fe:a9fe]/x', 'metadata address (169.254.169.254) in NAT64 form'],
    ['http://[64:ff9b:1:7f00:1::]/x', 'loopback address (127.0.1.0) in NAT64 local-use form'],
    ['http://[64:ff9b:1::a00:1]/x', 'in NAT64 local-use form'],
    ['http://[2002:7f00:1::]/x', 'loopback address (127.0.0.1) in 6to4 form'],
    ['http://[2002:c0a8:101::1]/x', 'private address (192.168.1.1) in 6to4 form'],
    ['http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/x', 'loopback address (127.0.0.1) in Teredo client form'],
    ['http://[2001:0:a00:1::1]/x', 'private address (10.0.0.1) in Teredo server form'],
    ['http://[::ffff:0:7f00:1]/x', 'loopback address (127.0.0.1) in SIIT form'],
    ['http://[::127.0.0.1]/x', 'reserved'],
    // Special-purpose ranges (IANA registries): only globally routable unicast is a target.
    ['http://198.18.0.1/x', 'benchmarking'],
    ['http://198.19.255.254/x', 'benchmarking'],
    ['http://192.0.0.170/x', 'IETF protocol'],
    ['http://192.0.0.8/x', 'IETF protocol'],
    ['http://192.0.2.1/x', 'documentation'],
    ['http://198.51.100.7/x', 'documentation'],
    ['http://203.0.113.9/x', 'documentation'],
    ['http://192.88.99.1/x', '6to4 relay'],
    ['http://255.255.255.255/x', 'broadcast'],
    ['http://250.1.2.3/x', 'reserved'],
    ['http://192.175.48.1/x', 'AS112'],
    ['http://192.52.193.1/x', 'AMT'],
    ['http://[2001:db8::1]/x', 'documentation'],
    ['http://[3fff::1]/x', 'documentation'],
    ['http://[2001:2::1]/x', 'benchmarking'],
    ['http://[100::1]/x', 'discard'],
    ['http://[fec0::1]/x', 'site-local'],
    ['http://[2001:10::1]/x', 'ORCHID'],
    ['http://[2001:20::1]/x', 'ORCHID'],
    ['http://[5f00::1]/x', 'segment routing'],
    ['http://[4000::1]/x', 'not global unicast'],
    ['http://[::2]/x', 'reserved'],
    // The same ranges in the other encodings of the table.
    ['http://3323068417/x', 'benchmarking'],
    ['http://0xc0.0.0.0xaa/x', 'IETF protocol'],
    ['http://[::ffff:198.18.0.1]/x', 'benchmarking'],
    ['http://[::ffff:c000:aa]/x', 'IETF protocol'],
    ['http://[64:ff9b::c612:1]/x', 'benchmarking address (198.18.0.1) in NAT64 form'],
    ['http://[2002:c000:aa::1]/x', 'IETF protocol assignment address (192.0.0.170) in 6to4 form'],
    ['http://[::ffff:0:c612:1]/x', 'benchmarking address (198.18.0.1) in SIIT form'],
  ];
  for (const [url, reason] of refused) {
    it(`refuses ${url} as ${reason}`, async () => {
      const error = await assertPublicTarget(url, { allowPrivate: false }).then(() => null, (e: unknown) => e);
      expect(error).to.be.instanceOf(UnsafeTargetError);
      const e = error as UnsafeTargetError;
      expect(e.code).to.equal('validation_failed');
      expect(e.details).to.have.length(1);
      expect(e.details![0]!.path).to.equal('url');
      expect(e.details![0]!.message).to.contain(reason);
    });
  }

  it('refuses each address of the table the same way when connecting: a literal, or a name that resolves to it', async () => {
    const agents = outboundAgents({ allowPrivate: false });
    try {
      for (const [url, reason] of refused) {
        const host = new URL(url).hostname.replace(/^\[(.*)\]$/, '$1');
        const literal = await send(agents, { allowPrivate: false }, { method: 'POST', url, timeoutMs: 1000 }).then(() => null, (e: unknown) => e as OutboundError);
        expect(literal?.kind, url).to.equal('refused');
        expect(literal?.message, url).to.contain(reason);
        // A name answering that address when the connection resolves it (DNS rebinding after the create-time check).
        const lookup = () => Promise.resolve([{ address: host, family: host.includes(':') ? 6 : 4 }]);
        const byName = outboundAgents({ allowPrivate: false, lookup });
        try {
          const named = await send(byName, { allowPrivate: false, lookup }, { method: 'POST', url: 'http://hooks.example/x', timeoutMs: 1000 }).then(() => null, (e: unknown) => e as OutboundError);
          expect(named?.kind, url).to.equal('refused');
          expect(named?.message, url).to.contain(reason);
        } finally {
          byName.http.destroy();
        }
      }
    } finally {
      agents.http.destroy();
    }
  });

  it('refuses localhost, whose addresses are loopback', async () => {
    const error = await assertPublicTarget('http://localhost:8080/hook', { allowPrivate: false }).then(() => null, (e: unknown) => e);
    expect(error).to.be.instanceOf(UnsafeTargetError);
    expect((error as UnsafeTargetError).details![0]!.message).to.match(/localhost \((127\.0\.0\.1|::1)\) is a loopback address/);
  });

  it('refuses a name when any one of its addresses is private', async () => {
    const lookup = () => Promise.resolve([{ address: '93.184.215.14', family: 4 }, { address: '10.0.0.5', family: 4 }]);
    const error = await assertPublicTarget('https://mixed.example/x', { allowPrivate: false, lookup }).then(() => null, (e: unknown) => e);
    expect((error as UnsafeTargetError).address).to.equal('10.0.0.5');
  });

  it('refuses a name that does not resolve, and a non-http scheme', async () => {
    const lookup = () => Promise.reject(new Error('ENOTFOUND'));
    const unresolved = await assertPublicTarget('https://nowhere.invalid/x', { allowPrivate: false, lookup }).then(() => null, (e: unknown) => e);
    expect((unresolved as UnsafeTargetError).details![0]!.message).to.contain('does not resolve');
    expect(await assertPublicTarget('ftp://93.184.215.14/x', { allowPrivate: true }).then(() => null, (e: unknown) => e)).to.be.instanceOf(UnsafeTargetError);
  });

  it('allows public addresses, IPv4 and IPv6, and names resolving to them', async () => {
    await assertPublicTarget('https://93.184.215.14/hook', { allowPrivate: false });
    await assertPublicTarget('https://[2606:2800:21f:cb07:6820:80da:af6b:8b2c]/hook', { allowPrivate: false });
    await assertPublicTarget('https://172.32.0.1/hook', { allowPrivate: false });
    // Transition forms of public IPv4 addresses stay allowed.
    await assertPublicTarget('https://[64:ff9b::5db8:d70e]/hook', { allowPrivate: false });
    await assertPublicTarget('https://[2002:5db8:d70e::1]/hook', { allowPrivate: false });
    await assertPublicTarget('https://hooks.example/x', { allowPrivate: false, lookup: () => Promise.resolve([{ address: '8.8.8.8', family: 4 }]) });
    expect(refusalOf('100.128.0.1')).to.equal(null);
    // Next to the special-purpose ranges, their neighbours are ordinary unicast.
    for (const address of ['198.20.0.1', '198.17.255.255', '192.0.1.1', '192.0.3.1', '203.0.114.1', '2001:db9::1', '2600::1', '2a00:1450::1', '::ffff:93.184.215.14']) {
      expect(refusalOf(address), address).to.equal(null);
    }
  });

  it('allows private targets when configured to', async () => {
    await assertPublicTarget('http://127.0.0.1:9/x', { allowPrivate: true });
    await assertPublicTarget('http://localhost/x', { allowPrivate: true });
  });
});

describe('webhook secrets at rest', () => {
  it('seals with AES-256-GCM so that only the same key and endpoint id open it', () => {
    const box = new SecretBox('a-master-secret-of-at-least-32-characters');
    const secret = newSigningSecret();
    expect(secret).to.match(/^whsec_[A-Za-z0-9_-]{43}$/);
    const sealed = box.seal(secret, 'wh_1');
    expect(sealed).not.to.contain(secret.slice(6));
    expect(box.open(sealed, 'wh_1')).to.equal(secret);
    expect(() => box.open(sealed, 'wh_2')).to.throw();
    expect(() => new SecretBox('another-master-secret-of-32-characters!').open(sealed, 'wh_1')).to.throw();
  });

  it('caps a logged response body at 4 KB without splitting a character', () => {
    expect(capBody('x'.repeat(5000))).to.have.length(4096);
    const capped = capBody(`${'x'.repeat(4095)}é and more`);
    expect(capped).to.equal('x'.repeat(4095));
    expect(capBody('short')).to.equal('short');
  });
});

describe('webhook configuration', () => {
  it('refuses private targets by default, except in all-in-one (a development run)', () => {
    expect(loadConfig('api', { MONGODB_URI: 'mongodb://db', NODE_ENV: 'test' }).webhooks).to.deep.equal({ allowPrivateTargets: false, secretGraceHours: 24 });
    expect(loadConfig('all-in-one', {}).webhooks.allowPrivateTargets).to.equal(true);
    expect(loadConfig('all-in-one', { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' }).webhooks.allowPrivateTargets).to.equal(false);
    expect(loadConfig('all-in-one', { WEBHOOK_SECRET_GRACE_HOURS: '0' }).webhooks.secretGraceHours).to.equal(0);
  });

  it('names a bad boolean and an out-of-range grace period', () => {
    try {
      loadConfig('all-in-one', { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'yes', WEBHOOK_SECRET_GRACE_HOURS: '-1' });
      expect.fail('loadConfig accepted bad values');
    } catch (error) {
      expect(error).to.be.instanceOf(ConfigError);
      const problems = (error as ConfigError).problems.join('\n');
      expect(problems).to.contain('WEBHOOK_ALLOW_PRIVATE_TARGETS').and.to.contain('WEBHOOK_SECRET_GRACE_HOURS');
    }
  });
});
