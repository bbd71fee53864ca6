import { useEffect, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api } from '../../api.ts';
import { ConfirmDialog } from '../../components/confirm-dialog.tsx';
import { CopyButton } from '../../components/copy-button.tsx';
import { DataTable, type Column } from '../../components/data-table.tsx';
import { EmptyState } from '../../components/empty-state.tsx';
import { ErrorBanner } from '../../components/error-banner.tsx';
import { Field } from '../../components/field.tsx';
import { Page } from '../../components/page.tsx';
import { Pager, useCursorList } from '../../components/pager.tsx';
import { toast } from '../../components/toast.tsx';
import { to } from '../../paths.ts';
import { ExportLinks } from './export-links.tsx';
import { useLinkOptions } from './link-options.ts';
import type { Link } from './link-types.ts';

interface Filters {
  search: string;
  domain_id: string;
  tag: string;
  folder_id: string;
  archived: string;
}

const FILTER_KEYS: (keyof Filters)[] = ['search', 'domain_id', 'tag', 'folder_id', 'archived'];

/** The filters live in the address (?search=…&tag=…), so a filtered list can be bookmarked and Back restores it. */
function filtersOf(query: Record<string, string>): Filters {
  return { search: query.search ?? '', domain_id: query.domain_id ?? '', tag: query.tag ?? '', folder_id: query.folder_id ?? '', archived: query.archived ?? 'false' };
}

function addressOf(filters: Filters): string {
  const params = new URLSearchParams();
  for (const key of FILTER_KEYS) {
    const value = filters[key];
    if (value && !(key === 'archived' && value === 'false')) params.set(key, value);
  }
  const search = params.toString();
  return `${to('/links')}${search ? `?${search}` : ''}`;
}

export default function LinksScreen() {
  const { query, route } = useLocation();
  const filters = filtersOf(query);
  const options = useLinkOptions();
  const [searchText, setSearchText] = useState(filters.search);
  const list = useCursorList<Link>('/v1/links', { ...filters, archived: filters.archived === 'all' ? undefined : filters.archived });
  const [deleting, setDeleting] = useState<Link | null>(null);
  const [busy, setBusy] = useState(false);

  // Searching as one types, once typing pauses.
  useEffect(() => {
    if (searchText === filters.search) return;
    const timer = setTimeout(() => route(addressOf({ ...filters, search: searchText }), true), 300);
    return () => clearTimeout(timer);
  }, [searchText]);

  const setFilter = (key: keyof Filters, value: string) => route(addressOf({ ...filters, [key]: value }), true);

  const setArchived = async (link: Link, archived: boolean) => {
    try {
      await api.patch(`/v1/links/${link.id}`, { archived });
      toast(archived ? `Archived ${link.short_url}.` : `Restored ${link.short_url}.`);
      list.reload();
    } catch (error) {
      toast(`Could not change ${link.short_url}: ${(error as Error).message}`, 'error');
    }
  };

  const remove = async () => {
    if (!deleting) return;
    setBusy(true);
    try {
      await api.delete(`/v1/links/${deleting.id}`);
      toast(`Deleted ${deleting.short_url}.`);
      list.reload();
    } catch (error) {
      toast(`Could not delete ${deleting.short_url}: ${(error as Error).message}`, 'error');
    } finally {
      setBusy(false);
      setDeleting(null);
    }
  };

  const columns: Column<Link>[] = [
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
    { label: 'Tags', render: (link) => link.tags.map((t) => t.name).join(', ') },
    { label: 'Created', render: (link) => new Date(link.created_at).toLocaleDateString() },
    {
      label: 'Actions',
      render: (link) => (
        <div class="row-actions">
          <CopyButton value={link.short_url} what={`short link ${link.slug}`} />
          <button type="button" class="secondary outline" onClick={() => void setArchived(link, !link.archived)} aria-label={`${link.archived ? 'Restore' : 'Archive'} ${link.slug}`}>
            {link.archived ? 'Restore' : 'Archive'}
          </button>
          <button type="button" class="secondary outline" onClick={() => setDeleting(link)} aria-label={`Delete ${link.slug}`}>
            Delete
          </button>
        </div>
      ),
    },
  ];

  const filtered = FILTER_KEYS.some((k) => k !== 'archived' && filters[k]);
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
        <div class="grid">
          <Field label="Search">
            {(control) => (
              <input {...control} type="search" name="search" value={searchText} maxLength={200} placeholder="Slug, title or destination" onInput={(e) => setSearchText(e.currentTarget.value)} />
            )}
          </Field>
          <Field label="Domain">
            {(control) => (
              <select {...control} value={filters.domain_id} onChange={(e) => setFilter('domain_id', e.currentTarget.value)}>
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
              <select {...control} value={filters.tag} onChange={(e) => setFilter('tag', e.currentTarget.value)}>
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
              <select {...control} value={filters.folder_id} onChange={(e) => setFilter('folder_id', e.currentTarget.value)}>
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
              <select {...control} value={filters.archived} onChange={(e) => setFilter('archived', e.currentTarget.value)}>
                <option value="false">Active</option>
                <option value="true">Archived</option>
                <option value="all">All</option>
              </select>
            )}
          </Field>
        </div>
      </form>
      <ErrorBanner error={list.error} title="The links could not be loaded" />
      {!list.loading && !list.error && list.items.length === 0 ? (
        filtered || filters.archived !== 'false' ? (
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
        <div aria-busy={list.loading ? 'true' : undefined}>
          <DataTable caption="Links" hideCaption columns={columns} rows={list.items} rowKey={(l) => l.id} />
        </div>
      )}
      <Pager {...list.pager} />
      <ConfirmDialog open={deleting !== null} title="Delete this link?" confirmLabel="Delete the link" danger busy={busy} onCancel={() => setDeleting(null)} onConfirm={() => void remove()}>
        <p>
          <strong>{deleting?.short_url}</strong> stops working at once. Archiving keeps it working and hides it from the list instead.
        </p>
      </ConfirmDialog>
    </Page>
  );
}
