import { lazy } from 'preact-iso';
import type { Area } from '../../area.ts';

export const linksArea: Area = {
  routes: [{ path: '/links', component: lazy(() => import('./links.screen.tsx')) }],
  nav: [{ path: '/links', label: 'Links', kinds: ['workspace'] }],
};
