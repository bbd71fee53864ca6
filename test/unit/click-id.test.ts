import { expect } from 'chai';
import { createHmac, hkdfSync } from 'node:crypto';
import { ClickIds } from '../../src/clicks/click-id.ts';

const SECRET = 'a-test-secret-key-of-at-least-32-characters';
const WS = 'ws_alpha';
const ISSUED = new Date('2026-03-01T12:00:00.000Z');
const DAY = 86_400_000;
const WINDOW = 30 * DAY;

const ids = new ClickIds(SECRET);
const later = (ms: number) => new Date(ISSUED.getTime() + ms);

/** The id with one character of its payload (before the dot) or of its MAC (after it) replaced. */
function flipped(id: string, part: 'payload' | 'mac'): string {
  const dot = id.indexOf('.');
  const at = part === 'payload' ? 6 : dot + 3;
  const replacement = id[at] === 'A' ? 'B' : 'A';
  return id.slice(0, at) + replacement + id.slice(at + 1);
}

describe('click ids (signed, workspace-bound, timestamped)', () => {
  it('verifies an id in the workspace that issued it and returns when it was issued (to the second)', () => {
    const id = ids.issue(WS, ISSUED);
    expect(id).to.match(/^clk_[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(ids.verify(id, WS, later(5 * DAY), WINDOW)).to.deep.equal({ ok: true, issuedAt: ISSUED });
  });

  it('signs with HMAC-SHA256, keyed by HKDF of the secret for this purpose, over the payload and the workspace id', () => {
    const key = Buffer.from(hkdfSync('sha256', SECRET, Buffer.alloc(0), 'linkplane click-id', 32));
    for (const workspaceId of [WS, 'ws_élan', `ws_${'x'.repeat(200)}`]) {
      const id = ids.issue(workspaceId, ISSUED);
      const [payload, mac] = id.slice(4).split('.') as [string, string];
      const independent = createHmac('sha256', key).update(Buffer.from(payload, 'base64url')).update(workspaceId).digest().subarray(0, 12);
      expect(Buffer.from(mac, 'base64url').equals(independent), workspaceId).to.equal(true);
      expect(Buffer.from(payload, 'base64url').readUInt32BE(1)).to.equal(ISSUED.getTime() / 1000);
    }
  });

  it('issues a different id for every click, even in the same second', () => {
    const issued = new Set(Array.from({ length: 2000 }, () => ids.issue(WS, ISSUED)));
    expect(issued.size).to.equal(2000);
  });

  it('verifies with another instance built from the same secret (another pod), not with another secret', () => {
    const id = ids.issue(WS, ISSUED);
    expect(new ClickIds(SECRET).verify(id, WS, ISSUED, WINDOW).ok).to.equal(true);
    expect(new ClickIds(`${SECRET}-rotated`).verify(id, WS, ISSUED, WINDOW)).to.deep.equal({ ok: false, reason: 'invalid' });
  });

  it('answers invalid for an id issued in another workspace', () => {
    const id = ids.issue('ws_other', ISSUED);
    expect(ids.verify(id, WS, ISSUED, WINDOW)).to.deep.equal({ ok: false, reason: 'invalid' });
  });

  it('answers invalid for a tampered payload (an earlier or later timestamp cannot be forged)', () => {
    const id = ids.issue(WS, ISSUED);
    expect(ids.verify(flipped(id, 'payload'), WS, ISSUED, WINDOW)).to.deep.equal({ ok: false, reason: 'invalid' });
  });

  it('answers invalid for a tampered MAC', () => {
    const id = ids.issue(WS, ISSUED);
    expect(ids.verify(flipped(id, 'mac'), WS, ISSUED, WINDOW)).to.deep.equal({ ok: false, reason: 'invalid' });
  });

  it('answers expired for a genuine id older than the attribution window, and accepts it at the edge', () => {
    const id = ids.issue(WS, ISSUED);
    expect(ids.verify(id, WS, later(WINDOW), WINDOW).ok).to.equal(true);
    expect(ids.verify(id, WS, later(WINDOW + 1000), WINDOW)).to.deep.equal({ ok: false, reason: 'expired' });
  });

  it('answers invalid, never expired, for a forged old id: the MAC is checked first', () => {
    const id = ids.issue(WS, ISSUED);
    expect(ids.verify(flipped(id, 'mac'), WS, later(WINDOW * 2), WINDOW)).to.deep.equal({ ok: false, reason: 'invalid' });
  });

  const garbage: [string, string][] = [
    ['an empty string', ''],
    ['a prefix only', 'clk_'],
    ['another kind of id', 'lnk_abcdefghijklmnopqrstuvwxyz0123456789'],
    ['no separator', `clk_${'A'.repeat(35)}`],
    ['characters outside base64url', `clk_${'+'.repeat(18)}.${'/'.repeat(16)}`],
    ['a truncated id', ids.issue(WS, ISSUED).slice(0, -2)],
    ['an id with a suffix', `${ids.issue(WS, ISSUED)}xx`],
    ['a wrong version byte', `clk_${Buffer.alloc(13, 2).toString('base64url')}.${'A'.repeat(16)}`],
  ];
  for (const [what, id] of garbage) {
    it(`answers invalid for ${what}`, () => {
      expect(ids.verify(id, WS, ISSUED, WINDOW)).to.deep.equal({ ok: false, reason: 'invalid' });
    });
  }

  it('gives untracked clicks unique unsigned ids that never verify', () => {
    const other = new ClickIds(SECRET);
    const issued = [...Array.from({ length: 1000 }, () => ids.unsigned()), other.unsigned()];
    expect(new Set(issued).size).to.equal(issued.length);
    for (const id of [issued[0]!, issued[999]!, issued[1000]!]) {
      expect(id.startsWith('clk_')).to.equal(true);
      expect(ids.verify(id, WS, ISSUED, WINDOW)).to.deep.equal({ ok: false, reason: 'invalid' });
    }
  });

  it('answers invalid for a non-string id arriving from untyped input', () => {
    expect(ids.verify(42 as unknown as string, WS, ISSUED, WINDOW)).to.deep.equal({ ok: false, reason: 'invalid' });
  });
});
