import { SubNav } from '../../components/sub-nav.tsx';

const PAGES = [
  { path: '/partner', label: 'Overview' },
  { path: '/partner/clients', label: 'Clients' },
  { path: '/partner/plans', label: 'Plans' },
  { path: '/partner/payments', label: 'Payments' },
  { path: '/partner/payouts', label: 'Payouts' },
];

/** The partner pages, linked from each of them. */
export function PartnerNav() {
  return <SubNav label="Partner pages" pages={PAGES} />;
}
