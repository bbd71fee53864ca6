// Which workspace or partner the dashboard opens on (web/src/context-choice.ts).
import { expect } from 'chai';
import { pickContext, type Membership } from '../../web/src/context-choice.ts';

const partner: Membership = { kind: 'partner', id: 'ptr_1', name: 'Partner Co', role: 'owner' };
const workspace: Membership = { kind: 'workspace', id: 'ws_1', name: 'Acme', role: 'owner' };
const other: Membership = { kind: 'workspace', id: 'ws_2', name: 'Other', role: 'member' };

describe('dashboard: the context a session opens on', () => {
  it('opens the one remembered in this browser while the person still belongs to it', () => {
    expect(pickContext([workspace, partner], 'ptr_1')).to.equal(partner);
    expect(pickContext([workspace, other], 'ws_2')).to.equal(other);
  });

  it('opens the first workspace, whichever order the memberships come in, when nothing (or a lost one) is remembered', () => {
    expect(pickContext([partner, workspace], null)).to.equal(workspace);
    expect(pickContext([workspace, partner], null)).to.equal(workspace);
    expect(pickContext([partner, other, workspace], 'ws_gone')).to.equal(other);
  });

  it('opens a partner when that is all the person belongs to, and nothing without memberships', () => {
    expect(pickContext([partner], null)).to.equal(partner);
    expect(pickContext([], null)).to.equal(null);
  });
});
