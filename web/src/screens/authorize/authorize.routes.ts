import { lazy } from 'preact-iso';
import type { Area } from '../../area.ts';

/** The consent page an app (an MCP host connecting by URL) sends a person to; reached from the app, not the menu. */
export const authorizeArea: Area = {
  routes: [{ path: '/authorize/:uid', component: lazy(() => import('./authorize.screen.tsx')) }],
  nav: [],
};
