import { useState } from 'preact/hooks';
import { api } from '../../api.ts';
import { DataTable, type Column } from '../../components/data-table.tsx';
import { ErrorBanner } from '../../components/error-banner.tsx';
import { Field } from '../../components/field.tsx';
import { Page } from '../../components/page.tsx';
import { toast } from '../../components/toast.tsx';
import { to } from '../../paths.ts';
import { BULK_COLUMNS, parseBulkCsv, type BulkRow, type ParsedCsv } from './bulk-rows.ts';
import { useLinkOptions } from './link-options.ts';
import type { BulkResult } from './link-types.ts';
import { describeDetail } from '../../components/field-path.ts';

/** POST /links/bulk takes up to 100 links per call (spec part 8). */
const BATCH = 100;

type Outcome = { status: 'created'; shortUrl: string } | { status: 'failed'; message: string };

export default function BulkImportScreen() {
  const options = useLinkOptions();
  const [text, setText] = useState('');
  const [parsed, setParsed] = useState<ParsedCsv | null>(null);
  const [outcomes, setOutcomes] = useState<Map<number, Outcome>>(new Map());
  const [progress, setProgress] = useState<{ done: number; total: number } | null>(null);
  const [error, setError] = useState<unknown>(null);

  const preview = (csv: string) => {
    setOutcomes(new Map());
    setError(null);
    setParsed(parseBulkCsv(csv, options));
  };

  const readFile = async (file: File | undefined) => {
    if (!file) return;
    const content = await file.text();
    setText(content);
    preview(content);
  };

  const valid = parsed?.rows.filter((r) => r.errors.length === 0 && !outcomes.has(r.line)) ?? [];

  const importRows = async () => {
    setError(null);
    const next = new Map(outcomes);
    setProgress({ done: 0, total: valid.length });
    try {
      for (let start = 0; start < valid.length; start += BATCH) {
        const batch = valid.slice(start, start + BATCH);
        const result = await api.post<BulkResult>('/v1/links/bulk', batch.map((r) => r.body));
        for (const item of result.data) {
          const row = batch[item.index]!;
          if (item.status === 'created') next.set(row.line, { status: 'created', shortUrl: item.link.short_url });
          else {
            const details = item.error.details?.map(describeDetail).join(' ');
            next.set(row.line, { status: 'failed', message: item.error.code === 'validation_failed' && details ? details : item.error.message });
          }
        }
        setOutcomes(new Map(next));
        setProgress({ done: Math.min(start + BATCH, valid.length), total: valid.length });
      }
      const created = [...next.values()].filter((o) => o.status === 'created').length;
      toast(`${created} ${created === 1 ? 'link' : 'links'} created.`);
    } catch (caught) {
      setError(caught);
    } finally {
      setProgress(null);
    }
  };

  const columns: Column<BulkRow>[] = [
    { label: 'Line', render: (r) => r.line, numeric: true },
    { label: 'Destination', render: (r) => <span class="truncate">{r.values.url}</span> },
    { label: 'Slug', render: (r) => r.values.slug || <span class="muted">generated</span> },
    { label: 'Title', render: (r) => r.values.title },
    {
      label: 'Status',
      render: (r) => {
        const outcome = outcomes.get(r.line);
        if (r.errors.length) return <span class="field-error">Not imported: {r.errors.join('; ')}</span>;
        if (!outcome) return 'Ready';
        if (outcome.status === 'created') return <a href={outcome.shortUrl}>{outcome.shortUrl}</a>;
        return <span class="field-error">Failed: {outcome.message}</span>;
      },
    },
  ];

  const bad = parsed?.rows.filter((r) => r.errors.length > 0).length ?? 0;
  const created = [...outcomes.values()].filter((o) => o.status === 'created').length;
  const failed = [...outcomes.values()].filter((o) => o.status === 'failed').length;
  const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;
  // Before the import: what is ready; after it: what happened, row by row.
  const summary = [
    plural(parsed?.rows.length ?? 0, 'row', 'rows') + ':',
    created > 0 && `${created} created,`,
    failed > 0 && `${failed} failed,`,
    valid.length > 0 && `${valid.length} ready,`,
    `${bad} with problems (not imported).`,
  ]
    .filter(Boolean)
    .join(' ');
  return (
    <Page title="Import links from CSV">
      <p>
        <a href={to('/links')}>← All links</a>
      </p>
      <p>
        The first line names the columns: <code>url</code> is required; <code>{BULK_COLUMNS.filter((c) => c !== 'url').join(', ')}</code> are optional. Tags are names
        separated by <code>|</code> or <code>;</code>; the domain is a connected hostname.
      </p>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          preview(text);
        }}
        aria-label="CSV to import"
      >
        <Field label="Paste CSV">
          {(control) => <textarea {...control} rows={6} value={text} placeholder={'url,slug,title\nhttps://example.com/a,spring-sale,Spring sale'} onInput={(e) => setText(e.currentTarget.value)} />}
        </Field>
        <Field label="Or choose a CSV file">
          {(control) => <input {...control} type="file" accept=".csv,text/csv" onChange={(e) => void readFile(e.currentTarget.files?.[0])} />}
        </Field>
        <button type="submit" class="secondary" disabled={!text.trim()}>
          Preview
        </button>
      </form>
      {parsed && (
        <section aria-labelledby="preview-title">
          <h2 id="preview-title">Preview</h2>
          {parsed.problems.map((p) => (
            <p key={p} class="field-error" role="alert">
              {p}
            </p>
          ))}
          {parsed.unknownColumns.length > 0 && <p>Ignored columns: {parsed.unknownColumns.join(', ')}.</p>}
          {parsed.rows.length > 0 && (
            <>
              <p role="status">
                {summary}
              </p>
              <DataTable caption="Rows to import" columns={columns} rows={parsed.rows} rowKey={(r) => String(r.line)} />
              <ErrorBanner error={error} title="The import stopped" />
              {progress && (
                <p>
                  <label>
                    Creating links: {progress.done} of {progress.total}
                    <progress value={progress.done} max={progress.total} />
                  </label>
                </p>
              )}
              {(valid.length > 0 || progress) && (
                <button type="button" onClick={() => void importRows()} disabled={progress !== null} aria-busy={progress ? 'true' : undefined}>
                  Create {plural(valid.length, 'link', 'links')}
                </button>
              )}
              {valid.length === 0 && !progress && created > 0 && (
                <p>
                  <a href={to('/links')}>See the links</a>
                </p>
              )}
            </>
          )}
        </section>
      )}
    </Page>
  );
}
