import { useState } from 'preact/hooks';
import { api } from '../../api.ts';
import type { Page as ApiPage } from '../../api.ts';
import { ConfirmDialog } from '../../components/confirm-dialog.tsx';
import { DataTable } from '../../components/data-table.tsx';
import { EmptyState } from '../../components/empty-state.tsx';
import { ErrorBanner } from '../../components/error-banner.tsx';
import { Page } from '../../components/page.tsx';
import { toast } from '../../components/toast.tsx';
import { useAction, useResource } from '../../components/use-resource.ts';
import { useCurrentContext } from '../../session.ts';
import { capabilityList } from '../../components/capabilities.ts';
import { formatMoney } from './money.ts';
import { PartnerNav } from './partner-nav.tsx';
import { PlanForm } from './plan-form.tsx';
import type { PartnerProfile, Plan } from './partner.types.ts';

const number = new Intl.NumberFormat();

/** The plans the partner sells: price, limits and capabilities; archived plans stay with their clients. */
export default function PlansScreen() {
  const context = useCurrentContext();
  const plans = useResource((signal) => api.get<ApiPage<Plan>>('/v1/partner/plans', undefined, signal), context.id);
  const profile = useResource((signal) => api.get<PartnerProfile>('/v1/partner', undefined, signal), context.id);
  const [creating, setCreating] = useState(false);
  const [archiving, setArchiving] = useState<Plan | null>(null);
  const [editing, setEditing] = useState<Plan | null>(null);
  const archive = useAction();

  const confirmArchive = async () => {
    if (!archiving) return;
    const answer = await archive.run(() => api.post<Plan>(`/v1/partner/plans/${archiving.id}/archive`));
    setArchiving(null);
    if (!answer) return;
    toast(`${answer.name} archived.`);
    plans.reload();
  };

  const items = plans.data?.data ?? [];
  return (
    <Page
      title="Plans"
      actions={
        !creating && (
          <button type="button" onClick={() => setCreating(true)} disabled={!profile.data}>
            New plan
          </button>
        )
      }
    >
      <PartnerNav />
      {creating && profile.data && (
        <PlanForm
          ceiling={profile.data.platform_plan}
          onCancel={() => setCreating(false)}
          onCreated={(plan) => {
            setCreating(false);
            toast(`Plan ${plan.name} created.`);
            plans.reload();
          }}
        />
      )}
      {editing && profile.data && (
        <PlanForm
          key={editing.id}
          ceiling={profile.data.platform_plan}
          plan={editing}
          onCancel={() => setEditing(null)}
          onCreated={(plan) => {
            setEditing(null);
            toast(`Plan ${plan.name} saved.`);
            plans.reload();
          }}
        />
      )}
      <ErrorBanner error={plans.error ?? profile.error ?? archive.error} title={archive.error ? 'The plan was not archived' : 'The plans could not be loaded'} />
      {plans.loading && !plans.data && <p aria-busy="true">Loading…</p>}
      {plans.data && items.length === 0 && <EmptyState title="No plans yet">A plan sets what a client pays and what it may use.</EmptyState>}
      {items.length > 0 && (
        <DataTable
          caption="Plans"
          hideCaption
          rows={items}
          rowKey={(p) => p.id}
          columns={[
            { label: 'Plan', render: (p) => <strong>{p.name}</strong> },
            { label: 'Status', render: (p) => <span class={`state-badge state-${p.status === 'active' ? 'ok' : 'wait'}`}>{p.status === 'active' ? 'Active' : 'Archived'}</span> },
            { label: 'Price', render: (p) => `${formatMoney(p.price.amount, p.price.currency)} per ${p.price.interval}` },
            {
              label: 'Limits',
              render: (p) =>
                `${number.format(p.limits.links)} links · ${number.format(p.limits.domains)} domains · ${number.format(p.limits.tracked_clicks_per_month)} clicks/month`,
            },
            { label: 'Capabilities', render: (p) => capabilityList(p.capabilities, '—') },
            { label: 'Clients', numeric: true, render: (p) => number.format(p.clients) },
            {
              label: 'Actions',
              render: (p) => (
                <div class="row-buttons">
                  <button type="button" class="secondary outline small" onClick={() => setEditing(p)} disabled={!profile.data} aria-label={`Edit ${p.name}`}>
                    Edit
                  </button>
                  {p.status === 'active' && (
                    <button type="button" class="secondary outline small" onClick={() => setArchiving(p)} aria-label={`Archive ${p.name}`}>
                      Archive
                    </button>
                  )}
                </div>
              ),
            },
          ]}
        />
      )}
      <ConfirmDialog
        open={archiving !== null}
        title={`Archive ${archiving?.name ?? ''}?`}
        confirmLabel="Archive plan"
        busy={archive.busy}
        onConfirm={() => void confirmArchive()}
        onCancel={() => setArchiving(null)}
      >
        <p>Its clients keep it; no new client can be put on it.</p>
      </ConfirmDialog>
    </Page>
  );
}
