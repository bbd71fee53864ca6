import { useLocation } from 'preact-iso';
import { to } from '../../paths.ts';

const PAGES = [
  { path: '/partner', label: 'Overview' },
  { path: '/partner/clients', label: 'Clients' },
  { path: '/partner/plans', label: 'Plans' },
  { path: '/partner/payments', label: 'Payments' },
  { path: '/partner/payouts', label: 'Payouts' },
];

/** The partner pages, linked from each of them (the main navigation collapses on a phone). */
export function PartnerNav() {
  const { path } = useLocation();
  return (
    <nav class="sub-nav" aria-label="Partner pages">
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
