import { useEffect, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, fetchPage, type Page as ApiPage } from '../../api.ts';
import { ConfirmDialog } from '../../components/confirm-dialog.tsx';
import { CopyButton } from '../../components/copy-button.tsx';
import { DataTable, type Column } from '../../components/data-table.tsx';
import { EmptyState } from '../../components/empty-state.tsx';
import { ErrorBanner } from '../../components/error-banner.tsx';
import { Field } from '../../components/field.tsx';
import { Page } from '../../components/page.tsx';
import { toast } from '../../components/toast.tsx';
import { PHONE, useMedia } from '../../components/use-media.ts';
import { to } from '../../paths.ts';
import { ExportLinks } from './export-links.tsx';
import { useLinkOptions } from './link-options.ts';
import type { Link } from './link-types.ts';
import { applyTo, countOf, downloadSelected, eachLink, sentenceOf, type BulkAction } from './links-selection.ts';
import './links.css';

interface Filters {
  search: string;
  domain_id: string;
  tag: string;
  folder_id: string;
  archived: string;
}

const FILTER_KEYS: (keyof Filters)[] = ['search', 'domain_id', 'tag', 'folder_id', 'archived'];
const PAGE_SIZES = [10, 25, 50, 100] as const;
const DEFAULT_SIZE = 25;

/** Everything the list shows lives in the address, so a bookmark, a reload or Back shows the same page. */
interface View extends Filters {
  limit: number;
  cursor: string | null;
  page: number;
}

function viewOf(query: Record<string, string>): View {
  const limit = Number(query.limit);
  const page = Number(query.page);
  return {
    search: query.search ?? '',
    domain_id: query.domain_id ?? '',
    tag: query.tag ?? '',
    folder_id: query.folder_id ?? '',
    archived: query.archived ?? 'false',
    limit: (PAGE_SIZES as readonly number[]).includes(limit) ? limit : DEFAULT_SIZE,
    cursor: query.cursor || null,
    page: query.cursor && Number.isInteger(page) && page > 1 ? page : 1,
  };
}

function addressOf(view: View): string {
  const params = new URLSearchParams();
  for (const key of FILTER_KEYS) {
    const value = view[key];
    if (value && !(key === 'archived' && value === 'false')) params.set(key, value);
  }
  if (view.limit !== DEFAULT_SIZE) params.set('limit', String(view.limit));
  if (view.cursor) {
    params.set('cursor', view.cursor);
    params.set('page', String(view.page));
  }
  const search = params.toString();
  return `${to('/links')}${search ? `?${search}` : ''}`;
}

/** The cursor of the page before each page seen in this tab, so Previous works after a reload of the list too. */
const previousOf = new Map<string, string | null>();

export default function LinksScreen() {
  const { query, route } = useLocation();
  const view = viewOf(query);
  const phone = useMedia(PHONE);
  const options = useLinkOptions();
  const [searchText, setSearchText] = useState(view.search);
  const [filtersOpen, setFiltersOpen] = useState(false);
  const [answer, setAnswer] = useState<ApiPage<Link> | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [loading, setLoading] = useState(true);
  const [total, setTotal] = useState<number | null>(null);
  const [clicks, setClicks] = useState<Map<string, number>>(new Map());
  const [generation, setGeneration] = useState(0);
  /** Chosen links by id, kept across pages (the bulk bar acts on all of them). */
  const [selected, setSelected] = useState<Map<string, Link>>(new Map());
  const [confirming, setConfirming] = useState<Link[] | null>(null);
  const [busy, setBusy] = useState(false);

  const filterQuery = {
    search: view.search || undefined,
    domain_id: view.domain_id || undefined,
    tag: view.tag || undefined,
    folder_id: view.folder_id || undefined,
    archived: view.archived === 'all' ? undefined : view.archived,
  };
  const filterKey = JSON.stringify(filterQuery);

  // The page, then the clicks of its links (one breakdown by link over the links shown).
  useEffect(() => {
    const controller = new AbortController();
    setLoading(true);
    setError(null);
    fetchPage<Link>('/v1/links', { ...filterQuery, limit: view.limit }, view.cursor, controller.signal).then(
      (page) => {
        setAnswer(page);
        setLoading(false);
        // Chosen links shown again are kept as they are now (their tags after a bulk tag, say).
        setSelected((current) => {
          if (!page.data.some((l) => current.has(l.id))) return current;
          const next = new Map(current);
          for (const link of page.data) if (next.has(link.id)) next.set(link.id, link);
          return next;
        });
        if (page.pagination.next_cursor) previousOf.set(page.pagination.next_cursor, view.cursor);
        void clicksOf(page.data, controller.signal).then((counts) => {
          if (!controller.signal.aborted) setClicks(counts);
        });
      },
      (failure: unknown) => {
        if (controller.signal.aborted) return;
        setError(failure);
        setLoading(false);
      },
    );
    return () => controller.abort();
  }, [filterKey, view.limit, view.cursor, generation]);

  // The total over every page, for the same filters.
  useEffect(() => {
    const controller = new AbortController();
    setTotal(null);
    api.get<{ count: number }>('/v1/links/count', filterQuery, controller.signal).then(
      (answer) => setTotal(answer.count),
      () => undefined,
    );
    return () => controller.abort();
  }, [filterKey, generation]);

  // Searching as one types, once typing pauses.
  useEffect(() => {
    if (searchText === view.search) return;
    const timer = setTimeout(() => route(addressOf({ ...view, search: searchText, cursor: null, page: 1 }), true), 300);
    return () => clearTimeout(timer);
  }, [searchText]);

  const setFilter = (key: keyof Filters, value: string) => route(addressOf({ ...view, [key]: value, cursor: null, page: 1 }), true);
  const links = answer?.data ?? [];
  const reload = () => setGeneration((g) => g + 1);

  const toggle = (link: Link, on: boolean) =>
    setSelected((current) => {
      const next = new Map(current);
      if (on) next.set(link.id, link);
      else next.delete(link.id);
      return next;
    });
  const allOnPage = links.length > 0 && links.every((l) => selected.has(l.id));
  const togglePage = (on: boolean) =>
    setSelected((current) => {
      const next = new Map(current);
      for (const link of links) {
        if (on) next.set(link.id, link);
        else next.delete(link.id);
      }
      return next;
    });

  const run = async (targets: Link[], action: BulkAction, verb: string) => {
    setBusy(true);
    try {
      const outcome = await eachLink(targets, (link) => applyTo(link, action));
      toast(sentenceOf(outcome, verb), outcome.failed.length > 0 ? 'error' : 'info', outcome.failed.length > 0 ? 10_000 : undefined);
      // Archived or deleted links leave the selection; tagged or moved ones stay chosen for the next action.
      if (action.kind === 'archive' || action.kind === 'delete') {
        setSelected((current) => {
          const next = new Map(current);
          for (const link of outcome.done) next.delete(link.id);
          return next;
        });
      }
      reload();
    } finally {
      setBusy(false);
      setConfirming(null);
    }
  };

  const chosen = [...selected.values()];
  const filtered = FILTER_KEYS.some((k) => k !== 'archived' && view[k]);
  const activeFilters = (['domain_id', 'tag', 'folder_id'] as const).filter((k) => view[k]).length + (view.archived !== 'false' ? 1 : 0);
  const showFilters = !phone || filtersOpen;

  return (
    <Page
      title="Links"
      actions={
        <>
          <a href={to('/links/new')} role="button">
            New link
          </a>
          <a href={`${to('/imports')}?source=csv`} role="button" class="secondary">
            Import CSV
          </a>
          <ExportLinks />
        </>
      }
    >
      <form class="filters" role="search" aria-label="Filter links" onSubmit={(e) => (e.preventDefault(), setFilter('search', searchText))}>
        <div class="filters-head">
          <Field label="Search">
            {(control) => (
              <input {...control} type="search" name="search" value={searchText} maxLength={200} placeholder="Slug, title or destination" onInput={(e) => setSearchText(e.currentTarget.value)} />
            )}
          </Field>
          {phone && (
            <button type="button" class="secondary outline filters-toggle" aria-expanded={filtersOpen ? 'true' : 'false'} aria-controls="link-filters" onClick={() => setFiltersOpen(!filtersOpen)}>
              Filters{activeFilters > 0 ? ` (${activeFilters})` : ''}
            </button>
          )}
        </div>
        <div class="grid" id="link-filters" hidden={!showFilters}>
          <Field label="Domain">
            {(control) => (
              <select {...control} value={view.domain_id} onChange={(e) => setFilter('domain_id', e.currentTarget.value)}>
                <option value="">All domains</option>
                {options.domains.map((d) => (
                  <option key={d.id} value={d.id}>
                    {d.hostname}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <Field label="Tag">
            {(control) => (
              <select {...control} value={view.tag} onChange={(e) => setFilter('tag', e.currentTarget.value)}>
                <option value="">All tags</option>
                {options.tags.map((t) => (
                  <option key={t.id} value={t.id}>
                    {t.name}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <Field label="Folder">
            {(control) => (
              <select {...control} value={view.folder_id} onChange={(e) => setFilter('folder_id', e.currentTarget.value)}>
                <option value="">All folders</option>
                {options.folders.map((f) => (
                  <option key={f.id} value={f.id}>
                    {f.name}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <Field label="Status">
            {(control) => (
              <select {...control} value={view.archived} onChange={(e) => setFilter('archived', e.currentTarget.value)}>
                <option value="false">Active</option>
                <option value="true">Archived</option>
                <option value="all">All</option>
              </select>
            )}
          </Field>
        </div>
      </form>
      <div class="list-summary">
        <p aria-live="polite">{total === null ? ' ' : filtered || view.archived !== 'false' ? `${countOf(total, 'link')} match` : `${countOf(total, 'link')} in total`}</p>
        <Field label="Per page">
          {(control) => (
            <select {...control} value={String(view.limit)} onChange={(e) => route(addressOf({ ...view, limit: Number(e.currentTarget.value), cursor: null, page: 1 }), true)}>
              {PAGE_SIZES.map((size) => (
                <option key={size} value={String(size)}>
                  {size}
                </option>
              ))}
            </select>
          )}
        </Field>
      </div>
      {chosen.length > 0 && (
        <BulkBar
          count={chosen.length}
          busy={busy}
          options={options}
          onClear={() => setSelected(new Map())}
          onArchive={(archived) => void run(chosen, { kind: 'archive', archived }, archived ? 'Archived' : 'Restored')}
          onTag={(tagId) => void run(chosen, { kind: 'tag', tagId }, 'Tagged')}
          onFolder={(folderId) => void run(chosen, { kind: 'folder', folderId }, 'Moved')}
          onDelete={() => setConfirming(chosen)}
          onExport={() => {
            downloadSelected(chosen, clicks);
            toast(`The CSV of ${countOf(chosen.length, 'selected link')} is downloading.`);
          }}
        />
      )}
      <ErrorBanner error={error} title="The links could not be loaded" />
      {!loading && !error && links.length === 0 ? (
        filtered || view.archived !== 'false' || view.cursor ? (
          <EmptyState title="No links match">Change or clear the filters to see more.</EmptyState>
        ) : (
          <EmptyState
            title="No links yet"
            action={
              <a href={to('/links/new')} role="button">
                Create your first link
              </a>
            }
          >
            Short links you create here, with the API or by CSV import appear in this list.
          </EmptyState>
        )
      ) : (
        <div aria-busy={loading ? 'true' : undefined}>
          {phone ? (
            <LinkCards links={links} clicks={clicks} selected={selected} onToggle={toggle} onAct={(link, action, verb) => void run([link], action, verb)} onDelete={(link) => setConfirming([link])} />
          ) : (
            <DataTable
              caption="Links"
              hideCaption
              columns={columnsOf({ clicks, selected, allOnPage, toggle, togglePage, act: (link, action, verb) => void run([link], action, verb), remove: (link) => setConfirming([link]) })}
              rows={links}
              rowKey={(l) => l.id}
            />
          )}
        </div>
      )}
      {(view.page > 1 || answer?.pagination.has_more) && (
        <nav class="pager" aria-label="Pages of links">
          <button
            type="button"
            class="secondary"
            disabled={view.page === 1 || loading}
            onClick={() => {
              const previous = view.cursor ? previousOf.get(view.cursor) : null;
              route(addressOf({ ...view, cursor: previous ?? null, page: previous ? view.page - 1 : 1 }));
            }}
          >
            Previous page
          </button>
          <span>
            Page {view.page}
            {total !== null && ` of ${Math.max(1, Math.ceil(total / view.limit))}`}
          </span>
          <button
            type="button"
            class="secondary"
            disabled={!answer?.pagination.has_more || loading}
            onClick={() => answer?.pagination.next_cursor && route(addressOf({ ...view, cursor: answer.pagination.next_cursor, page: view.page + 1 }))}
          >
            Next page
          </button>
        </nav>
      )}
      <ConfirmDialog
        open={confirming !== null}
        title={confirming?.length === 1 ? 'Delete this link?' : `Delete ${countOf(confirming?.length ?? 0, 'link')}?`}
        confirmLabel={confirming?.length === 1 ? 'Delete the link' : 'Delete the links'}
        danger
        busy={busy}
        onCancel={() => setConfirming(null)}
        onConfirm={() => confirming && void run(confirming, { kind: 'delete' }, 'Deleted')}
      >
        <p>
          {confirming?.length === 1 ? <strong>{confirming[0]!.short_url}</strong> : countOf(confirming?.length ?? 0, 'short link')} stop
          {confirming?.length === 1 ? 's' : ''} working at once. Archiving keeps a link working and hides it from the list instead.
        </p>
      </ConfirmDialog>
    </Page>
  );
}

/** Clicks per link of a page, over the plan's analytics retention; empty when analytics cannot answer. */
async function clicksOf(links: readonly Link[], signal: AbortSignal): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  const chunks: Link[][] = [];
  for (let i = 0; i < links.length; i += 50) chunks.push(links.slice(i, i + 50));
  try {
    for (const chunk of chunks) {
      const answer = await api.get<{ data: { value: string | null; clicks: number }[] }>(
        '/v1/analytics/breakdown',
        { dimension: 'link', interval: 'all', link_id: chunk.map((l) => l.id).join(','), limit: 100 },
        signal,
      );
      for (const link of chunk) counts.set(link.id, 0);
      for (const row of answer.data) if (row.value) counts.set(row.value, row.clicks);
    }
  } catch {
    // No analytics on this plan or key: the column shows a dash.
  }
  return counts;
}

type Act = (link: Link, action: BulkAction, verb: string) => void;

function columnsOf(p: {
  clicks: Map<string, number>;
  selected: Map<string, Link>;
  allOnPage: boolean;
  toggle: (link: Link, on: boolean) => void;
  togglePage: (on: boolean) => void;
  act: Act;
  remove: (link: Link) => void;
}): Column<Link>[] {
  return [
    {
      label: 'Select',
      header: <input type="checkbox" aria-label="Select every link on this page" checked={p.allOnPage} onChange={(e) => p.togglePage(e.currentTarget.checked)} />,
      render: (link) => <input type="checkbox" aria-label={`Select ${link.slug}`} checked={p.selected.has(link.id)} onChange={(e) => p.toggle(link, e.currentTarget.checked)} />,
    },
    {
      label: 'Short link',
      render: (link) => (
        <>
          <a href={to(`/links/${link.id}`)}>{link.short_url.replace(/^https?:\/\//, '')}</a>
          {link.archived && <span class="badge"> archived</span>}
          {link.title && <div class="muted">{link.title}</div>}
        </>
      ),
    },
    { label: 'Destination', render: (link) => <span class="truncate" title={link.url}>{link.url}</span> },
    { label: 'Clicks', numeric: true, render: (link) => clickText(p.clicks, link) },
    { label: 'Tags', render: (link) => link.tags.map((t) => t.name).join(', ') },
    { label: 'Created', render: (link) => new Date(link.created_at).toLocaleDateString() },
    { label: 'Actions', render: (link) => <RowActions link={link} act={p.act} remove={p.remove} /> },
  ];
}

function clickText(clicks: Map<string, number>, link: Link): string {
  const n = clicks.get(link.id);
  return n === undefined ? '—' : n.toLocaleString();
}

function RowActions({ link, act, remove }: { link: Link; act: Act; remove: (link: Link) => void }) {
  return (
    <div class="row-actions">
      <CopyButton value={link.short_url} what={`short link ${link.slug}`} />
      <button type="button" class="secondary outline" onClick={() => act(link, { kind: 'archive', archived: !link.archived }, link.archived ? 'Restored' : 'Archived')} aria-label={`${link.archived ? 'Restore' : 'Archive'} ${link.slug}`}>
        {link.archived ? 'Restore' : 'Archive'}
      </button>
      <button type="button" class="secondary outline" onClick={() => remove(link)} aria-label={`Delete ${link.slug}`}>
        Delete
      </button>
    </div>
  );
}

/** On a phone: one card per link, every part of it readable without scrolling sideways. */
function LinkCards(p: { links: Link[]; clicks: Map<string, number>; selected: Map<string, Link>; onToggle: (link: Link, on: boolean) => void; onAct: Act; onDelete: (link: Link) => void }) {
  return (
    <ul class="link-cards" aria-label="Links">
      {p.links.map((link) => (
        <li key={link.id} class="link-card">
          <div class="link-card-head">
            <input type="checkbox" aria-label={`Select ${link.slug}`} checked={p.selected.has(link.id)} onChange={(e) => p.onToggle(link, e.currentTarget.checked)} />
            <a href={to(`/links/${link.id}`)} class="link-card-short">
              {link.short_url.replace(/^https?:\/\//, '')}
            </a>
            <span class="link-card-clicks">{countOf(p.clicks.get(link.id) ?? 0, 'click')}</span>
          </div>
          {link.title && <p class="muted">{link.title}</p>}
          <p class="link-card-url">{link.url}</p>
          <p class="muted">
            {link.archived && 'Archived · '}
            {link.tags.length > 0 && `${link.tags.map((t) => t.name).join(', ')} · `}
            {new Date(link.created_at).toLocaleDateString()}
          </p>
          <RowActions link={link} act={p.onAct} remove={p.onDelete} />
        </li>
      ))}
    </ul>
  );
}

function BulkBar(p: {
  count: number;
  busy: boolean;
  options: ReturnType<typeof useLinkOptions>;
  onClear: () => void;
  onArchive: (archived: boolean) => void;
  onTag: (tagId: string) => void;
  onFolder: (folderId: string | null) => void;
  onDelete: () => void;
  onExport: () => void;
}) {
  return (
    <section class="bulk-bar" aria-label="Selected links" aria-busy={p.busy ? 'true' : undefined}>
      <p>
        <strong>{countOf(p.count, 'link')} selected</strong>{' '}
        <button type="button" class="secondary outline small" onClick={p.onClear}>
          Clear selection
        </button>
      </p>
      <div class="bulk-actions">
        <button type="button" class="secondary" disabled={p.busy} onClick={() => p.onArchive(true)}>
          Archive
        </button>
        <button type="button" class="secondary" disabled={p.busy} onClick={() => p.onArchive(false)}>
          Restore
        </button>
        <Field label="Add tag">
          {(control) => (
            <select {...control} value="" disabled={p.busy || p.options.tags.length === 0} onChange={(e) => e.currentTarget.value && p.onTag(e.currentTarget.value)}>
              <option value="">{p.options.tags.length === 0 ? 'No tags yet' : 'Choose a tag…'}</option>
              {p.options.tags.map((t) => (
                <option key={t.id} value={t.id}>
                  {t.name}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Move to folder">
          {(control) => (
            <select {...control} value="" disabled={p.busy} onChange={(e) => e.currentTarget.value && p.onFolder(e.currentTarget.value === '-' ? null : e.currentTarget.value)}>
              <option value="">Choose a folder…</option>
              <option value="-">No folder</option>
              {p.options.folders.map((f) => (
                <option key={f.id} value={f.id}>
                  {f.name}
                </option>
              ))}
            </select>
          )}
        </Field>
        <button type="button" class="secondary" disabled={p.busy} onClick={p.onExport}>
          Export selected
        </button>
        <button type="button" class="danger" disabled={p.busy} onClick={p.onDelete}>
          Delete
        </button>
      </div>
    </section>
  );
}
