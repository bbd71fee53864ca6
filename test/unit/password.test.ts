import { expect } from 'chai';
import { hashPassword, verifyPassword } from '../../src/platform/password.ts';
import { VerificationSlots } from '../../src/platform/password-attempts.ts';

describe('link passwords', () => {
  it('stores an scrypt hash with its parameters and a fresh salt, never the password', async () => {
    const [a, b] = await Promise.all([hashPassword('hunter22'), hashPassword('hunter22')]);
    expect(a).to.match(/^scrypt\$32768\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    expect(a).not.to.contain('hunter22');
    expect(a, 'a fresh salt each time').not.to.equal(b);
  });

  it('verifies the right password and refuses a wrong or malformed one', async () => {
    const stored = await hashPassword('correct horse');
    expect(await verifyPassword('correct horse', stored)).to.equal(true);
    expect(await verifyPassword('correct hors', stored)).to.equal(false);
    expect(await verifyPassword('correct horse', 'bcrypt$whatever')).to.equal(false);
    expect(await verifyPassword('correct horse', stored.replace(/\$[^$]+$/, '$AAAA'))).to.equal(false);
  });

  it('treats canonically equivalent Unicode the same (NFC)', async () => {
    const stored = await hashPassword('caf\u00e9');
    expect(await verifyPassword('cafe\u0301', stored)).to.equal(true);
  });
});

describe('password verification slots', () => {
  it('bounds checks at once per link and per visitor, and frees a slot once', () => {
    const slots = new VerificationSlots({ perLink: 3, perVisitor: 2 });
    const a1 = slots.acquire('lnk_1', 'ip-a');
    const a2 = slots.acquire('lnk_2', 'ip-a');
    expect(a1).to.be.a('function');
    expect(a2).to.be.a('function');
    expect(slots.acquire('lnk_3', 'ip-a'), 'a third check of one visitor').to.equal(null);
    const b1 = slots.acquire('lnk_1', 'ip-b');
    const c1 = slots.acquire('lnk_1', 'ip-c');
    expect(b1).to.be.a('function');
    expect(c1).to.be.a('function');
    expect(slots.acquire('lnk_1', 'ip-d'), 'a fourth check of one link').to.equal(null);
    a1!();
    a1!();
    expect(slots.acquire('lnk_1', 'ip-d'), 'released once, one slot back').to.be.a('function');
    expect(slots.acquire('lnk_1', 'ip-e')).to.equal(null);
  });
});
