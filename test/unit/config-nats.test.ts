import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../src/config/config.ts';
import { natsServers } from '../../src/platform/nats.ts';

describe('config: NATS cluster settings', () => {
  it('reads one server as a list of one', () => {
    const config = loadConfig('all-in-one', { NATS_URL: 'nats://nats:4222/' });
    expect(config.nats.servers).to.deep.equal(['nats://nats:4222']);
    expect(config.nats.url).to.equal('nats://nats:4222');
  });

  it('reads a comma-separated list of servers, blanks around the commas ignored', () => {
    const config = loadConfig('all-in-one', { NATS_URL: 'nats://a:4222, nats://b:4222 ,tls://c:4222' });
    expect(config.nats.servers).to.deep.equal(['nats://a:4222', 'nats://b:4222', 'tls://c:4222']);
    expect(natsServers(config.nats.url)).to.deep.equal(['nats://a:4222', 'nats://b:4222', 'tls://c:4222']);
  });

  it('names NATS_URL when one entry of the list is not a NATS URL, or empty', () => {
    expect(() => loadConfig('all-in-one', { NATS_URL: 'nats://a:4222,http://b:4222' })).to.throw(ConfigError, /NATS_URL: protocol must be nats: or tls:, got "http:"/);
    expect(() => loadConfig('all-in-one', { NATS_URL: 'nats://a:4222,not a url' })).to.throw(ConfigError, /NATS_URL: not a valid URL: "not a url"/);
    expect(() => loadConfig('all-in-one', { NATS_URL: 'nats://a:4222,,nats://b:4222' })).to.throw(ConfigError, /NATS_URL: empty entry/);
  });
});
