import { useEffect, useState } from 'preact/hooks';
import { ApiError, api } from '../../api.ts';
import { ErrorBanner } from '../../components/error-banner.tsx';
import { Field } from '../../components/field.tsx';
import { Page } from '../../components/page.tsx';
import { toast } from '../../components/toast.tsx';
import { useAction, useResource } from '../../components/use-resource.ts';
import { useCurrentContext } from '../../session.ts';
import { capabilityList } from '../../components/capabilities.ts';
import { UsageBar } from './usage-bar.tsx';
import { UtmTemplates, WorkspaceIdentity } from './workspace-identity.tsx';
import { WorkspaceNav } from './workspace-nav.tsx';
import { QrLogoSettings } from './qr-logo.tsx';
import type { WorkspaceProfile } from './workspace.types.ts';

const number = new Intl.NumberFormat();
const day = (iso: string) => new Date(iso).toLocaleDateString(undefined, { timeZone: 'UTC', dateStyle: 'medium' });

/** The workspace profile: its plan, limits and this month's usage, and the conversion tracking settings. */
export default function WorkspaceScreen() {
  const context = useCurrentContext();
  const profile = useResource((signal) => api.get<WorkspaceProfile>('/v1/workspace', undefined, signal), context.id);
  const ws = profile.data;
  return (
    <Page title="Workspace">
      <WorkspaceNav />
      <ErrorBanner error={profile.error} title="The workspace could not be loaded" />
      {profile.loading && !ws && <p aria-busy="true">Loading…</p>}
      {ws && (
        <>
          <section aria-labelledby="ws-profile">
            <h2 id="ws-profile">{ws.name}</h2>
            <dl class="facts">
              <dt>Identifier</dt>
              <dd>
                <code>{ws.id}</code>
              </dd>
              <dt>Created</dt>
              <dd>{new Date(ws.created_at).toLocaleString()}</dd>
              <dt>Notices go to</dt>
              <dd>{ws.owner_email ?? 'No address on file'}</dd>
              {ws.partner_id && (
                <>
                  <dt>Managed by partner</dt>
                  <dd>
                    <code>{ws.partner_id}</code>
                  </dd>
                </>
              )}
              <dt>Plan</dt>
              <dd>
                {ws.plan.name} <small class="muted">({ws.plan.id})</small>
              </dd>
              <dt>Included</dt>
              <dd>{capabilityList(ws.plan.capabilities, 'No optional capability')}</dd>
              <dt>API rate limit</dt>
              <dd>{number.format(ws.plan.limits.rate_limit_per_minute)} requests per minute per key</dd>
            </dl>
          </section>
          <section aria-labelledby="ws-usage">
            <h2 id="ws-usage">Limits and usage</h2>
            <p>
              This period: {day(ws.usage.period_start)} to {day(ws.usage.period_end)} (UTC).
            </p>
            <UsageBar label="Links" used={ws.usage.links} limit={ws.plan.limits.links} />
            <UsageBar label="Custom domains" used={ws.usage.domains} limit={ws.plan.limits.domains} />
            <UsageBar label="Tracked clicks this month" used={ws.usage.tracked_clicks} limit={ws.plan.limits.tracked_clicks_per_month} />
          </section>
          <WorkspaceIdentity profile={ws} canEdit={context.role === 'owner'} onSaved={profile.set} />
          <UtmTemplates profile={ws} canEdit={context.role === 'owner'} onSaved={profile.set} />
          <ConversionSettings profile={ws} canEdit={context.role === 'owner'} onSaved={profile.set} />
          <QrLogoSettings workspaceId={ws.id} canEdit={context.role === 'owner'} />
        </>
      )}
    </Page>
  );
}

function ConversionSettings({ profile, canEdit, onSaved }: { profile: WorkspaceProfile; canEdit: boolean; onSaved: (p: WorkspaceProfile) => void }) {
  const [tracking, setTracking] = useState(profile.conversion_tracking);
  const [windowDays, setWindowDays] = useState(String(profile.attribution_window_days));
  useEffect(() => {
    setTracking(profile.conversion_tracking);
    setWindowDays(String(profile.attribution_window_days));
  }, [profile]);
  const action = useAction();
  const failure = action.error instanceof ApiError ? action.error : null;
  const allowed = profile.plan.capabilities.includes('conversions');

  const save = async (event: Event) => {
    event.preventDefault();
    const answer = await action.run(() => api.patch<WorkspaceProfile>('/v1/workspace', { conversion_tracking: tracking, attribution_window_days: Number(windowDays) }));
    if (!answer) return;
    onSaved(answer);
    toast('Conversion tracking saved.');
  };

  return (
    <section aria-labelledby="ws-conversions">
      <h2 id="ws-conversions">Conversion tracking</h2>
      {!allowed && <p>The plan does not include conversions; tracking cannot be turned on.</p>}
      {!canEdit && <p>Only owners change these settings.</p>}
      <form onSubmit={(e) => void save(e)} aria-label="Conversion tracking">
        {action.error !== null && !failure?.details.length && <ErrorBanner error={action.error} title="The settings were not saved" />}
        <label>
          <input type="checkbox" role="switch" name="conversion_tracking" checked={tracking} disabled={!canEdit || (!allowed && !tracking)} onChange={(e) => setTracking(e.currentTarget.checked)} />
          Append a signed click id to every destination, so conversions can be attributed to their click
        </label>
        <Field label="Attribution window (days)" error={failure?.fieldError('attribution_window_days')} hint="Conversions reporting a click older than this are refused.">
          {(control) => (
            <input {...control} type="number" name="attribution_window_days" min={1} max={90} required disabled={!canEdit} value={windowDays} onInput={(e) => setWindowDays(e.currentTarget.value)} />
          )}
        </Field>
        <button type="submit" disabled={!canEdit || action.busy} aria-busy={action.busy ? 'true' : undefined}>
          Save conversion tracking
        </button>
      </form>
    </section>
  );
}
