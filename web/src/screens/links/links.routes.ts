import { lazy } from 'preact-iso';
import type { Area } from '../../area.ts';

const LinkEditor = lazy(() => import('./link-editor.screen.tsx'));

export const linksArea: Area = {
  routes: [
    { path: '/links', component: lazy(() => import('./links.screen.tsx')) },
    { path: '/links/new', component: LinkEditor },
    { path: '/links/bulk', component: lazy(() => import('./bulk-import.screen.tsx')) },
    { path: '/links/:id', component: LinkEditor },
  ],
  nav: [{ path: '/links', label: 'Links', kinds: ['workspace'] }],
};
