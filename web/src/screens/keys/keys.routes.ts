import { lazy } from 'preact-iso';
import type { Area } from '../../area.ts';

export const keysArea: Area = {
  routes: [{ path: '/keys', component: lazy(() => import('./keys.screen.tsx')) }],
  nav: [{ path: '/keys', label: 'Keys', kinds: ['workspace', 'partner'] }],
};
