import { lazy } from 'preact-iso';
import type { Area } from '../../area.ts';

export const partnerArea: Area = {
  routes: [{ path: '/partner', component: lazy(() => import('./partner.screen.tsx')) }],
  nav: [{ path: '/partner', label: 'Partner', kinds: ['partner'] }],
};
