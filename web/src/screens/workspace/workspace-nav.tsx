import { useLocation } from 'preact-iso';
import { to } from '../../paths.ts';

const PAGES = [
  { path: '/workspace', label: 'Overview' },
  { path: '/workspace/rules', label: 'Workspace rules' },
  { path: '/workspace/ip-lists', label: 'IP lists' },
];

/** The workspace settings pages, linked from each of them. */
export function WorkspaceNav() {
  const { path } = useLocation();
  return (
    <nav class="sub-nav" aria-label="Workspace settings">
      <ul>
        {PAGES.map((page) => (
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
