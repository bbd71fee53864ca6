// Every dashboard URL lives under the base the build was made for (vite `base`, /dashboard/).
export const BASE = import.meta.env.BASE_URL.replace(/\/$/, '');

/** The address of a dashboard page: `to('/links')` is `/dashboard/links`. */
export function to(path: string): string {
  return `${BASE}${path.startsWith('/') ? path : `/${path}`}`;
}
