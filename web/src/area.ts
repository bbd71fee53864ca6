// What each screen area contributes to the app: its routes and its navigation entries. Every area declares
// them in its own folder (screens/<area>/<area>.routes.ts), so areas are added and changed independently.
import type { AnyComponent } from 'preact';
import type { ContextKind } from './session.ts';

export interface AreaRoute {
  /** Path below the dashboard base, in preact-iso syntax: `/links/:id`. */
  path: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- route components receive preact-iso's route props
  component: AnyComponent<any>;
}

export interface NavEntry {
  /** Path below the dashboard base; the entry is current for this path and everything under it. */
  path: string;
  label: string;
  /** The contexts (workspace, partner) in which the entry is shown. */
  kinds: ContextKind[];
}

export interface Area {
  routes: AreaRoute[];
  nav: NavEntry[];
}
