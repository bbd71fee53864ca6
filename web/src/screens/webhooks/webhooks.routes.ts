import { lazy } from 'preact-iso';
import type { Area } from '../../area.ts';

export const webhooksArea: Area = {
  routes: [
    { path: '/webhooks', component: lazy(() => import('./webhooks.screen.tsx')) },
    { path: '/webhooks/:id', component: lazy(() => import('./webhook.screen.tsx')) },
  ],
  nav: [{ path: '/webhooks', label: 'Webhooks', kinds: ['workspace', 'partner'] }],
};
