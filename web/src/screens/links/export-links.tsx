import { useState } from 'preact/hooks';
import { api, describeError } from '../../api.ts';
import { toast } from '../../components/toast.tsx';

const FORMATS = [
  { format: 'csv', label: 'Export CSV', what: 'CSV' },
  { format: 'jsonl', label: 'Export JSON Lines', what: 'JSON Lines' },
] as const;

/**
 * Downloads every link of the workspace (GET /v1/links/export) as CSV or JSON Lines, through a one-minute download
 * link (see api.download): the browser writes the file as it streams, whatever the workspace's size. The export
 * holds every link, whatever the list's filters.
 */
export function ExportLinks() {
  const [busy, setBusy] = useState(false);
  const download = async (format: 'csv' | 'jsonl', what: string) => {
    setBusy(true);
    try {
      await api.download('/v1/links/export', { format });
      toast(`The ${what} export of every link is downloading.`);
    } catch (error) {
      toast(`The export failed: ${describeError(error)}`, 'error', 10_000);
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      {FORMATS.map(({ format, label, what }) => (
        <button key={format} type="button" class="secondary outline" onClick={() => void download(format, what)} disabled={busy} aria-busy={busy ? 'true' : undefined}>
          {label}
        </button>
      ))}
    </>
  );
}
