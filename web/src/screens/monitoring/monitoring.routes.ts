import { lazy } from 'preact-iso';
import type { Area } from '../../area.ts';

// What happened after the click and what needs a look: conversions, alert firings, abuse reports.
export const monitoringArea: Area = {
  routes: [
    { path: '/conversions', component: lazy(() => import('./conversions.screen.tsx')) },
    { path: '/alerts', component: lazy(() => import('./alerts.screen.tsx')) },
    { path: '/reports', component: lazy(() => import('./reports.screen.tsx')) },
  ],
  nav: [
    { path: '/conversions', label: 'Conversions', kinds: ['workspace'] },
    { path: '/alerts', label: 'Alerts', kinds: ['workspace'] },
    { path: '/reports', label: 'Abuse reports', kinds: ['workspace'] },
  ],
};
