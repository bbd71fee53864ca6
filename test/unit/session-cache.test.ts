import { expect } from 'chai';
import { SessionCache, type SessionGrant } from '../../src/users/session-cache.ts';
import type { Principal } from '../../src/tenancy/principal.ts';
import type { SessionDoc } from '../../src/tenancy/session.store.ts';

const HOUR = 3_600_000;

function grant(userId: string, workspaceId: string, at: number, idleMs = HOUR): SessionGrant {
  const session: SessionDoc = {
    _id: `ses_${userId}`,
    token_hash: 'h',
    user_id: userId,
    csrf_token: 'c',
    created_at: new Date(at),
    last_seen_at: new Date(at),
    idle_expires_at: new Date(at + idleMs),
    expires_at: new Date(at + 24 * HOUR),
    revoked_at: null,
    user_agent: null,
    ip: null,
  };
  const principal = { kind: 'workspace', workspace: { _id: workspaceId } } as unknown as Principal;
  return { session, principal };
}

describe('SessionCache', () => {
  let now = 1_000_000;
  const cache = () => new SessionCache({ ttlMs: 60_000, maxEntries: 100, now: () => now });

  it('answers a grant by token and context only, until its TTL', () => {
    const c = cache();
    c.remember('tok', 'ws_a', grant('usr_1', 'ws_a', now), c.mark);
    expect(c.get('tok', 'ws_a')?.session.user_id).to.equal('usr_1');
    expect(c.get('tok', 'ws_b')).to.equal(undefined);
    expect(c.get('other', 'ws_a')).to.equal(undefined);
    now += 60_001;
    expect(c.get('tok', 'ws_a')).to.equal(undefined);
  });

  it('stops answering a session past its idle expiry even within the TTL', () => {
    const c = cache();
    c.remember('tok', 'ws_a', grant('usr_1', 'ws_a', now, 1000), c.mark);
    now += 1000;
    expect(c.get('tok', 'ws_a')).to.equal(undefined);
  });

  it("drops a user's grants on a `user` invalidation and a workspace's on a `workspace` one, and nothing else", () => {
    const c = cache();
    c.remember('t1', 'ws_a', grant('usr_1', 'ws_a', now), c.mark);
    c.remember('t1', 'ws_b', grant('usr_1', 'ws_b', now), c.mark);
    c.remember('t2', 'ws_a', grant('usr_2', 'ws_a', now), c.mark);
    c.remember('t3', 'ws_c', grant('usr_3', 'ws_c', now), c.mark);
    c.drop({ kind: 'user', id: 'usr_1' });
    expect([c.get('t1', 'ws_a'), c.get('t1', 'ws_b')]).to.deep.equal([undefined, undefined]);
    expect(c.get('t2', 'ws_a')).to.not.equal(undefined);
    c.drop({ kind: 'workspace', id: 'ws_a' });
    expect(c.get('t2', 'ws_a')).to.equal(undefined);
    c.drop({ kind: 'link', id: 'usr_3' });
    expect(c.get('t3', 'ws_c')).to.not.equal(undefined);
  });

  it('does not keep a grant loaded while an invalidation came in (it may have been read before the change)', () => {
    const c = cache();
    const mark = c.mark;
    c.drop({ kind: 'user', id: 'usr_9' });
    c.remember('tok', 'ws_a', grant('usr_1', 'ws_a', now), mark);
    expect(c.get('tok', 'ws_a')).to.equal(undefined);
  });

  it('keeps nothing with a TTL of 0', () => {
    const c = new SessionCache({ ttlMs: 0, maxEntries: 100, now: () => now });
    c.remember('tok', 'ws_a', grant('usr_1', 'ws_a', now), c.mark);
    expect(c.get('tok', 'ws_a')).to.equal(undefined);
  });
});
