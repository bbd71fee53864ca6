// The link editor's UTM block: the five parameters, written by the API into every destination of the link, and the
// workspace's saved templates (GET/PATCH /v1/workspace `utm_templates`) to fill them in one go or to save them.
import { useEffect, useState } from 'preact/hooks';
import { ApiError, api, describeError } from '../../api.ts';
import { Field } from '../../components/field.tsx';
import { toast } from '../../components/toast.tsx';
import type { UtmTemplate, WorkspaceProfile } from '../workspace/workspace.types.ts';
import { UTM_KEYS, utmBody, type Utm } from './link-draft.ts';

const LABELS: Record<(typeof UTM_KEYS)[number], string> = {
  utm_source: 'Source (utm_source)',
  utm_medium: 'Medium (utm_medium)',
  utm_campaign: 'Campaign (utm_campaign)',
  utm_term: 'Term (utm_term)',
  utm_content: 'Content (utm_content)',
};

export function UtmFields({ value, onChange, error }: { value: Utm; onChange: (utm: Utm) => void; error: ApiError | null }) {
  const [templates, setTemplates] = useState<UtmTemplate[] | null>(null);
  const [chosen, setChosen] = useState('');
  const [name, setName] = useState('');
  const [saveError, setSaveError] = useState<string | null>(null);
  useEffect(() => {
    api.get<WorkspaceProfile>('/v1/workspace').then((p) => setTemplates(p.utm_templates ?? []), () => setTemplates([]));
  }, []);

  const apply = () => {
    const template = templates?.find((t) => t.name === chosen);
    if (!template) return;
    onChange({ ...value, ...Object.fromEntries(UTM_KEYS.map((key) => [key, template.utm[key] ?? ''])) });
    toast(`Template ${template.name} applied.`);
  };

  const save = async () => {
    const trimmed = name.trim();
    if (!trimmed || !templates) return;
    setSaveError(null);
    try {
      const others = templates.filter((t) => t.name.toLowerCase() !== trimmed.toLowerCase());
      const profile = await api.patch<WorkspaceProfile>('/v1/workspace', { utm_templates: [...others, { name: trimmed, utm: utmBody(value) }] });
      setTemplates(profile.utm_templates);
      setName('');
      toast(`Template ${trimmed} saved.`);
    } catch (caught) {
      setSaveError(caught instanceof ApiError ? (caught.details[0]?.message ?? caught.message) : describeError(caught));
    }
  };

  const filled = Object.keys(utmBody(value)).length > 0;
  return (
    <>
      <p>Added to the destination URL, and to each A/B variant, rotator destination and rule redirect that does not set the parameter itself.</p>
      {templates && templates.length > 0 && (
        <div class="new-label">
          <Field label="Saved template">
            {(control) => (
              <select {...control} value={chosen} onChange={(e) => setChosen(e.currentTarget.value)}>
                <option value="">Choose a template</option>
                {templates.map((t) => (
                  <option key={t.name} value={t.name}>
                    {t.name}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <button type="button" class="secondary" disabled={!chosen} onClick={apply}>
            Apply the template
          </button>
        </div>
      )}
      <div class="grid">
        {UTM_KEYS.map((key) => (
          <Field key={key} label={LABELS[key]} error={error?.fieldError(`utm.${key}`)}>
            {(control) => <input {...control} maxLength={200} value={value[key]} onInput={(e) => onChange({ ...value, [key]: e.currentTarget.value })} />}
          </Field>
        ))}
      </div>
      {filled && templates && (
        <div class="new-label">
          <Field label="Save these parameters as a template named" error={saveError}>
            {(control) => (
              <input
                {...control}
                maxLength={60}
                value={name}
                onInput={(e) => setName(e.currentTarget.value)}
                onKeyDown={(e) => {
                  if (e.key !== 'Enter') return;
                  e.preventDefault();
                  void save();
                }}
              />
            )}
          </Field>
          <button type="button" class="secondary" disabled={!name.trim()} onClick={() => void save()}>
            Save the template
          </button>
        </div>
      )}
    </>
  );
}
