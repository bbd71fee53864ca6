import { useEffect, useState } from 'preact/hooks';
import { ApiError, api } from '../../api.ts';
import { ErrorBanner } from '../../components/error-banner.tsx';
import { Page } from '../../components/page.tsx';
import { toast } from '../../components/toast.tsx';
import { useAction, useResource } from '../../components/use-resource.ts';
import { useCurrentContext } from '../../session.ts';
import { cleanRule, newKey, type RuleDraft } from '../links/link-draft.ts';
import { RuleBuilder } from '../links/rule-builder.tsx';
import type { Rule } from '../links/link-types.ts';
import { WorkspaceNav } from './workspace-nav.tsx';
import type { WorkspaceProfile } from './workspace.types.ts';

const toDrafts = (rules: Rule[]): RuleDraft[] => rules.map((rule) => ({ ...rule, key: newKey() }));

/**
 * The workspace rules: checked on every link before the link's own rules (unless a link turns them off), edited with
 * the same rule builder as a link's.
 */
export default function WorkspaceRulesScreen() {
  const context = useCurrentContext();
  const profile = useResource((signal) => api.get<WorkspaceProfile>('/v1/workspace', undefined, signal), context.id);
  const [rules, setRules] = useState<RuleDraft[] | null>(null);
  const action = useAction();
  useEffect(() => {
    if (profile.data) setRules(toDrafts(profile.data.rules));
  }, [profile.data]);
  const failure = action.error instanceof ApiError ? action.error : null;
  const canEdit = context.role === 'owner';
  const allowed = profile.data?.plan.capabilities.includes('rules') ?? true;

  const save = async (event: Event) => {
    event.preventDefault();
    if (!rules) return;
    const answer = await action.run(() => api.patch<WorkspaceProfile>('/v1/workspace', { rules: rules.map(cleanRule) }));
    if (!answer) return;
    profile.set(answer);
    toast('Workspace rules saved.');
  };

  return (
    <Page title="Workspace rules">
      <WorkspaceNav />
      <p>These rules apply to every link of the workspace, before the link's own rules; a link can turn them off.</p>
      {!allowed && <p>The plan does not include rules: saving them is refused until it does.</p>}
      {!canEdit && <p>Only owners change the workspace rules.</p>}
      <ErrorBanner error={profile.error} title="The workspace could not be loaded" />
      {profile.loading && !rules && <p aria-busy="true">Loading…</p>}
      {rules && (
        <form onSubmit={(e) => void save(e)} aria-label="Workspace rules">
          {action.error !== null && <ErrorBanner error={action.error} title="The rules were not saved" />}
          <RuleBuilder rules={rules} onChange={setRules} error={failure} />
          <div class="form-actions">
            <button type="submit" disabled={!canEdit || action.busy} aria-busy={action.busy ? 'true' : undefined}>
              Save workspace rules
            </button>
          </div>
        </form>
      )}
    </Page>
  );
}
