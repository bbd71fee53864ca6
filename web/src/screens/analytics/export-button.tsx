import { useState } from 'preact/hooks';
import { api, describeError, type Query } from '../../api.ts';
import { toast } from '../../components/toast.tsx';

/**
 * Downloads GET /v1/analytics/export.csv with the screen's parameters, through a one-minute download link (see
 * api.download): the browser writes the file to disk as it streams, whatever its size.
 */
export function ExportButton({ query }: { query: Query }) {
  const [busy, setBusy] = useState(false);
  const download = async () => {
    setBusy(true);
    try {
      await api.download('/v1/analytics/export.csv', query);
      toast('The CSV export is downloading.');
    } catch (error) {
      toast(`The export failed: ${describeError(error)}`, 'error', 10_000);
    } finally {
      setBusy(false);
    }
  };
  return (
    <button type="button" class="secondary" onClick={() => void download()} disabled={busy} aria-busy={busy ? 'true' : undefined}>
      Export CSV
    </button>
  );
}
