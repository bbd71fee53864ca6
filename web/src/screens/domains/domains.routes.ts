import { lazy } from 'preact-iso';
import type { Area } from '../../area.ts';

export const domainsArea: Area = {
  routes: [{ path: '/domains', component: lazy(() => import('./domains.screen.tsx')) }],
  nav: [{ path: '/domains', label: 'Domains', kinds: ['workspace', 'partner'] }],
};
