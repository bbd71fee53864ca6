import { lazy } from 'preact-iso';
import type { Area } from '../../area.ts';

export const partnerArea: Area = {
  routes: [
    { path: '/partner', component: lazy(() => import('./partner.screen.tsx')) },
    { path: '/partner/clients', component: lazy(() => import('./clients.screen.tsx')) },
    { path: '/partner/plans', component: lazy(() => import('./plans.screen.tsx')) },
    { path: '/partner/payments', component: lazy(() => import('./payments.screen.tsx')) },
    { path: '/partner/payouts', component: lazy(() => import('./payouts.screen.tsx')) },
  ],
  // One entry: the partner pages link to each other (PartnerNav), which keeps the main navigation short.
  nav: [{ path: '/partner', label: 'Partner', kinds: ['partner'] }],
};
