import { lazy } from 'preact-iso';
import type { Area } from '../../area.ts';

export const workspaceArea: Area = {
  routes: [{ path: '/workspace', component: lazy(() => import('./workspace.screen.tsx')) }],
  nav: [{ path: '/workspace', label: 'Workspace', kinds: ['workspace'] }],
};
