import { SubNav } from '../../components/sub-nav.tsx';

const PAGES = [
  { path: '/workspace', label: 'Overview' },
  { path: '/workspace/rules', label: 'Workspace rules' },
  { path: '/workspace/ip-lists', label: 'IP lists' },
];

/** The workspace settings pages, linked from each of them. */
export function WorkspaceNav() {
  return <SubNav label="Workspace settings" pages={PAGES} />;
}
