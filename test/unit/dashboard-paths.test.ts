// The dashboard's addresses name the workspace or partner they show (web/src/paths.ts).
import { expect } from 'chai';
import { contextOfPath, inContext, setPathContext, to } from '../../web/src/paths.ts';

describe('dashboard: addresses that name their context', () => {
  afterEach(() => setPathContext(null));

  it('builds the address of a page of a workspace or a partner', () => {
    expect(inContext({ kind: 'workspace', id: 'ws_1' }, '/links')).to.equal('/dashboard/w/ws_1/links');
    expect(inContext({ kind: 'partner', id: 'pa_1' }, '/partner/clients')).to.equal('/dashboard/p/pa_1/partner/clients');
    expect(inContext({ kind: 'workspace', id: 'ws_1' }, '/')).to.equal('/dashboard/w/ws_1');
  });

  it('reads the context and the page back from an address, and nothing from one without a context', () => {
    expect(contextOfPath('/dashboard/w/ws_1/links/lnk_2')).to.deep.equal({ kind: 'workspace', id: 'ws_1', rest: '/links/lnk_2' });
    expect(contextOfPath('/dashboard/p/pa_1/partner/')).to.deep.equal({ kind: 'partner', id: 'pa_1', rest: '/partner' });
    expect(contextOfPath('/dashboard/w/ws_1')).to.deep.equal({ kind: 'workspace', id: 'ws_1', rest: '/' });
    expect(contextOfPath('/dashboard/links')).to.equal(null);
    expect(contextOfPath('/dashboard/sign-in')).to.equal(null);
    expect(contextOfPath('/dashboard/w/%E0%A4%A/links'), 'a malformed id').to.equal(null);
  });

  it('puts the context in view into every page address but the public pages', () => {
    expect(to('/links')).to.equal('/dashboard/links');
    setPathContext({ kind: 'partner', id: 'pa_1' });
    expect(to('/partner/plans')).to.equal('/dashboard/p/pa_1/partner/plans');
    expect(to('/sign-in')).to.equal('/dashboard/sign-in');
    expect(to('/sign-in/link')).to.equal('/dashboard/sign-in/link');
    expect(to('/accept-invite')).to.equal('/dashboard/accept-invite');
  });
});
