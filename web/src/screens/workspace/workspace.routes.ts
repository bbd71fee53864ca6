import { lazy } from 'preact-iso';
import type { Area } from '../../area.ts';

export const workspaceArea: Area = {
  routes: [
    { path: '/workspace', component: lazy(() => import('./workspace.screen.tsx')) },
    { path: '/workspace/rules', component: lazy(() => import('./workspace-rules.screen.tsx')) },
    { path: '/workspace/ip-lists', component: lazy(() => import('./ip-lists.screen.tsx')) },
    // Members and the person's own account exist in a partner as much as in a workspace.
    { path: '/members', component: lazy(() => import('./members.screen.tsx')) },
    { path: '/account', component: lazy(() => import('./account.screen.tsx')) },
  ],
  nav: [
    { path: '/workspace', label: 'Workspace', kinds: ['workspace'] },
    { path: '/members', label: 'Members', kinds: ['workspace', 'partner'] },
    { path: '/account', label: 'Account', kinds: ['workspace', 'partner'] },
  ],
};
