import { useLocation } from 'preact-iso';
import { to } from '../paths.ts';

export interface SubPage {
  path: string;
  label: string;
}

/**
 * The pages of one area, linked from each of them (the main navigation collapses on a phone); the page shown is
 * marked `aria-current`.
 */
export function SubNav({ label, pages }: { label: string; pages: readonly SubPage[] }) {
  const { path } = useLocation();
  return (
    <nav class="sub-nav" aria-label={label}>
      <ul>
        {pages.map((page) => (
          <li key={page.path}>
            <a href={to(page.path)} aria-current={path === to(page.path) ? 'page' : undefined}>
              {page.label}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}
