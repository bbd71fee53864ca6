import { EmptyState } from '../../components/empty-state.tsx';
import { Page } from '../../components/page.tsx';

export default function DomainsScreen() {
  return (
    <Page title="Domains">
      <EmptyState title="Not available yet">This part of the dashboard is not built yet; the API and the CLI cover it meanwhile.</EmptyState>
    </Page>
  );
}
