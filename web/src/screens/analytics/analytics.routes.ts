import { lazy } from 'preact-iso';
import type { Area } from '../../area.ts';

export const analyticsArea: Area = {
  routes: [{ path: '/analytics', component: lazy(() => import('./analytics.screen.tsx')) }],
  nav: [{ path: '/analytics', label: 'Analytics', kinds: ['workspace', 'partner'] }],
};
