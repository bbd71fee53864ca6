import { expect } from 'chai';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { blockedReason, parseBlocklist } from '../../src/config/link-safety.ts';
import { ConfigError, loadConfig } from '../../src/config/config.ts';

const FILE = `# known bad
malware.example          distributes malware
bücher.example
/\\.(exe|scr|msi)([?#]|$)/i executable download
`;

describe('link safety blocklist', () => {
  const { blocklist, problems } = parseBlocklist(FILE);

  it('parses hosts (punycode) and /patterns/flags with their reasons', () => {
    expect(problems).to.deep.equal([]);
    expect(blocklist.hosts.map((h) => h.host)).to.deep.equal(['malware.example', 'xn--bcher-kva.example']);
    expect(blocklist.patterns).to.have.length(1);
  });

  it('refuses a blocked host and its subdomains, with the reason, and nothing else', () => {
    expect(blockedReason(blocklist, 'https://malware.example/x')).to.equal('distributes malware');
    expect(blockedReason(blocklist, 'https://cdn.MALWARE.example./x')).to.equal('distributes malware');
    expect(blockedReason(blocklist, 'https://notmalware.example/x')).to.equal(null);
    expect(blockedReason(blocklist, 'https://malware.example.com/x')).to.equal(null);
    expect(blockedReason(blocklist, 'https://bücher.example/')).to.equal('the host is on the blocklist');
  });

  it('refuses addresses matching a pattern, tested on the normalised URL', () => {
    expect(blockedReason(blocklist, 'https://files.example.com/setup.EXE?x=1')).to.equal('executable download');
    expect(blockedReason(blocklist, 'https://files.example.com/setup.exe.html')).to.equal(null);
  });

  it('names every bad line of the file', () => {
    expect(parseBlocklist('ok.example\n/(unclosed/\nhttp://a/b reason\n/x').problems.map((p) => p.split(':')[0])).to.deep.equal(['line 2', 'line 3', 'line 4']);
  });

  it('is read by the configuration from LINK_BLOCKLIST_HOSTS and LINK_BLOCKLIST_FILE, refusing start-up on a bad entry', () => {
    const dir = mkdtempSync(join(tmpdir(), 'lp-blocklist-'));
    writeFileSync(join(dir, 'good'), FILE);
    writeFileSync(join(dir, 'bad'), '/[/\n');
    const base = { MONGODB_URI: 'mongodb://127.0.0.1:1', NODE_ENV: 'test' };
    const config = loadConfig('api', { ...base, LINK_BLOCKLIST_HOSTS: 'phish.example, evil.example', LINK_BLOCKLIST_FILE: join(dir, 'good') });
    expect(config.linkBlocklist.hosts.map((h) => h.host)).to.deep.equal(['phish.example', 'evil.example', 'malware.example', 'xn--bcher-kva.example']);
    expect(() => loadConfig('api', { ...base, LINK_BLOCKLIST_FILE: join(dir, 'bad') })).to.throw(ConfigError, /LINK_BLOCKLIST_FILE .*line 1/);
    expect(() => loadConfig('api', { ...base, LINK_BLOCKLIST_FILE: join(dir, 'missing') })).to.throw(ConfigError, /cannot read/);
    expect(() => loadConfig('api', { ...base, LINK_BLOCKLIST_HOSTS: 'a/b' })).to.throw(ConfigError, /LINK_BLOCKLIST_HOSTS/);
  });
});
