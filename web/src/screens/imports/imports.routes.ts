import { lazy } from 'preact-iso';
import type { Area } from '../../area.ts';

export const importsArea: Area = {
  routes: [{ path: '/imports', component: lazy(() => import('./imports.screen.tsx')) }],
  nav: [{ path: '/imports', label: 'Import', kinds: ['workspace'] }],
};
