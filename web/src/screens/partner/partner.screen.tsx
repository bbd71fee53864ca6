import { useEffect, useState } from 'preact/hooks';
import { ApiError, api } from '../../api.ts';
import { CopyButton } from '../../components/copy-button.tsx';
import { ErrorBanner } from '../../components/error-banner.tsx';
import { Field } from '../../components/field.tsx';
import { Page } from '../../components/page.tsx';
import { toast } from '../../components/toast.tsx';
import { useAction, useResource } from '../../components/use-resource.ts';
import { useCurrentContext } from '../../session.ts';
import { UsageBar } from '../workspace/usage-bar.tsx';
import { capabilityList } from '../../components/capabilities.ts';
import { PartnerNav } from './partner-nav.tsx';
import type { PartnerProfile } from './partner.types.ts';

const number = new Intl.NumberFormat();
const percent = (bps: number) => `${(bps / 100).toLocaleString(undefined, { maximumFractionDigits: 2 })} %`;

/** The partner: its platform plan (the ceiling of what it sells), client quota, fees, billing and settings. */
export default function PartnerScreen() {
  const context = useCurrentContext();
  const profile = useResource((signal) => api.get<PartnerProfile>('/v1/partner', undefined, signal), context.id);
  const p = profile.data;
  return (
    <Page title="Partner">
      <PartnerNav />
      <ErrorBanner error={profile.error} title="The partner could not be loaded" />
      {profile.loading && !p && <p aria-busy="true">Loading…</p>}
      {p && (
        <>
          <section aria-labelledby="partner-profile">
            <h2 id="partner-profile">{p.name}</h2>
            <UsageBar label="Clients" used={p.clients.count} limit={p.clients.quota} />
            <dl class="facts">
              <dt>Identifier</dt>
              <dd>
                <code>{p.id}</code>
              </dd>
              <dt>Platform plan</dt>
              <dd>
                <code>{p.platform_plan.id}</code>: up to {number.format(p.platform_plan.limits.links)} links, {number.format(p.platform_plan.limits.domains)} domains and{' '}
                {number.format(p.platform_plan.limits.tracked_clicks_per_month)} tracked clicks a month per client
              </dd>
              <dt>Capabilities</dt>
              <dd>{capabilityList(p.platform_plan.capabilities)}</dd>
              <dt>Platform fee</dt>
              <dd>{percent(p.platform_fee_bps)} of each payment</dd>
              <dt>Stripe webhook URL</dt>
              <dd>
                <code class="wrap">{p.billing.stripe_ingestion_url}</code> <CopyButton value={p.billing.stripe_ingestion_url} what="Stripe webhook URL" />
              </dd>
              <dt>Stripe signing secret</dt>
              <dd>{p.billing.stripe_endpoint_secret_set ? 'Set (never shown again)' : 'Not set: Stripe events are refused'}</dd>
            </dl>
          </section>
          <PartnerSettings profile={p} canEdit={context.role === 'owner'} onSaved={profile.set} />
        </>
      )}
    </Page>
  );
}

function PartnerSettings({ profile, canEdit, onSaved }: { profile: PartnerProfile; canEdit: boolean; onSaved: (p: PartnerProfile) => void }) {
  const [suspended, setSuspended] = useState(profile.suspended_links);
  const [grace, setGrace] = useState(String(profile.grace_period_days));
  const [feeBps, setFeeBps] = useState(String(profile.processor_fee.percent_bps));
  const [feeFixed, setFeeFixed] = useState(String(profile.processor_fee.fixed));
  const [secret, setSecret] = useState('');
  useEffect(() => {
    setSuspended(profile.suspended_links);
    setGrace(String(profile.grace_period_days));
    setFeeBps(String(profile.processor_fee.percent_bps));
    setFeeFixed(String(profile.processor_fee.fixed));
  }, [profile]);
  const action = useAction();
  const failure = action.error instanceof ApiError ? action.error : null;

  const save = async (event: Event) => {
    event.preventDefault();
    const body: Record<string, unknown> = {
      suspended_links: suspended,
      grace_period_days: Number(grace),
      processor_fee: { percent_bps: Number(feeBps), fixed: Number(feeFixed) },
    };
    if (secret.trim()) body.stripe_endpoint_secret = secret.trim();
    const answer = await action.run(() => api.patch<PartnerProfile>('/v1/partner', body));
    if (!answer) return;
    setSecret('');
    onSaved(answer);
    toast('Partner settings saved.');
  };

  return (
    <section aria-labelledby="partner-settings">
      <h2 id="partner-settings">Settings</h2>
      {!canEdit && <p>Only owners change these settings.</p>}
      <form onSubmit={(e) => void save(e)} aria-label="Partner settings">
        {action.error !== null && !failure?.details.length && <ErrorBanner error={action.error} title="The settings were not saved" />}
        <Field label="Links of suspended clients" error={failure?.fieldError('suspended_links')}>
          {(control) => (
            <select {...control} disabled={!canEdit} value={suspended} onChange={(e) => setSuspended(e.currentTarget.value as PartnerProfile['suspended_links'])}>
              <option value="redirect">Keep redirecting</option>
              <option value="suspended_page">Show a “link unavailable” page</option>
            </select>
          )}
        </Field>
        <Field label="Grace period (days)" error={failure?.fieldError('grace_period_days')} hint="How long a client whose payment failed keeps working before it is suspended.">
          {(control) => <input {...control} type="number" min={0} max={60} required disabled={!canEdit} value={grace} onInput={(e) => setGrace(e.currentTarget.value)} />}
        </Field>
        <div class="grid">
          <Field label="Processor fee (basis points)" error={failure?.fieldError('processor_fee.percent_bps')} hint="290 is 2.9 %.">
            {(control) => <input {...control} type="number" min={0} max={10000} required disabled={!canEdit} value={feeBps} onInput={(e) => setFeeBps(e.currentTarget.value)} />}
          </Field>
          <Field label="Processor fee per payment (minor units)" error={failure?.fieldError('processor_fee.fixed')} hint="30 is 0.30 in a currency with cents.">
            {(control) => <input {...control} type="number" min={0} required disabled={!canEdit} value={feeFixed} onInput={(e) => setFeeFixed(e.currentTarget.value)} />}
          </Field>
        </div>
        <Field label="New Stripe signing secret (optional)" error={failure?.fieldError('stripe_endpoint_secret')} hint="whsec_… from the Stripe endpoint; stored encrypted and never shown again.">
          {(control) => <input {...control} type="password" autoComplete="off" disabled={!canEdit} value={secret} onInput={(e) => setSecret(e.currentTarget.value)} />}
        </Field>
        <button type="submit" disabled={!canEdit || action.busy} aria-busy={action.busy ? 'true' : undefined}>
          Save settings
        </button>
      </form>
    </section>
  );
}
