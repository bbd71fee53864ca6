import { useState } from 'preact/hooks';
import { api, describeError, type Query } from '../../api.ts';
import { toast } from '../../components/toast.tsx';

/**
 * Downloads GET /v1/analytics/export.csv with the screen's parameters. A plain link cannot carry the context header
 * the api needs, so the file is fetched and handed to the browser as a blob (img-src/connect-src allow it).
 */
export function ExportButton({ query }: { query: Query }) {
  const [busy, setBusy] = useState(false);
  const download = async () => {
    setBusy(true);
    try {
      const blob = await api.blob('/v1/analytics/export.csv', query, 'text/csv');
      const url = URL.createObjectURL(blob);
      const anchor = document.createElement('a');
      anchor.href = url;
      anchor.download = `clicks-${new Date().toISOString().slice(0, 10)}.csv`;
      document.body.append(anchor);
      anchor.click();
      anchor.remove();
      setTimeout(() => URL.revokeObjectURL(url), 60_000);
      toast('The CSV export was downloaded.');
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
