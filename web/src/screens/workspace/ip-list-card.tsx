import { useEffect, useState } from 'preact/hooks';
import { ApiError, api } from '../../api.ts';
import { CopyButton } from '../../components/copy-button.tsx';
import { ErrorBanner } from '../../components/error-banner.tsx';
import { Field } from '../../components/field.tsx';
import { toast } from '../../components/toast.tsx';
import { useAction } from '../../components/use-resource.ts';
import { parseEntries } from './ip-entries.ts';
import type { IpList } from './workspace.types.ts';

/** Entries shown one by one; a longer list is edited as text. */
const SHOWN = 50;

/** One IP list: its entries (add one, remove one), the whole list as text, and deletion. */
export function IpListCard({ list, onChanged, onDelete }: { list: IpList; onChanged: () => void; onDelete: () => void }) {
  const [adding, setAdding] = useState('');
  const [text, setText] = useState(list.entries.join('\n'));
  useEffect(() => setText(list.entries.join('\n')), [list.entries]);
  const action = useAction();
  const failure = action.error instanceof ApiError ? action.error : null;
  const headingId = `ipl-${list.id}`;

  const save = async (entries: string[], done: string) => {
    const answer = await action.run(() => api.patch<IpList>(`/v1/ip-lists/${list.id}`, { entries }));
    if (!answer) return false;
    toast(done);
    onChanged();
    return true;
  };
  const add = async (event: Event) => {
    event.preventDefault();
    const entries = parseEntries(adding);
    if (entries.length === 0) return;
    if (await save([...list.entries, ...entries.filter((e) => !list.entries.includes(e))], `Added to ${list.name}.`)) setAdding('');
  };

  return (
    <article aria-labelledby={headingId} class="ip-list">
      <header class="section-header">
        <h2 id={headingId}>{list.name}</h2>
        <span>
          <code>{list.id}</code> <CopyButton value={list.id} what={`identifier of ${list.name}`} />
        </span>
      </header>
      {list.note && <p>{list.note}</p>}
      {action.error !== null && <ErrorBanner error={action.error} title="The list was not saved" />}
      <p>
        {list.entries.length} {list.entries.length === 1 ? 'entry' : 'entries'}
      </p>
      {list.entries.length > 0 && (
        <ul class="ip-entries" aria-label={`Entries of ${list.name}`}>
          {list.entries.slice(0, SHOWN).map((entry) => (
            <li key={entry}>
              <code>{entry}</code>
              <button
                type="button"
                class="secondary outline small"
                aria-label={`Remove ${entry} from ${list.name}`}
                disabled={action.busy}
                onClick={() => void save(list.entries.filter((e) => e !== entry), `Removed ${entry}.`)}
              >
                Remove
              </button>
            </li>
          ))}
          {list.entries.length > SHOWN && <li>and {list.entries.length - SHOWN} more (see “Edit every entry”)</li>}
        </ul>
      )}
      <form onSubmit={(e) => void add(e)} aria-label={`Add to ${list.name}`} class="inline-form">
        <Field label={`Add an address or range to ${list.name}`} error={failure?.fieldError('entries', true)}>
          {(control) => <input {...control} name="entry" placeholder="203.0.113.7 or 198.51.100.0/24" value={adding} onInput={(e) => setAdding(e.currentTarget.value)} />}
        </Field>
        <button type="submit" disabled={action.busy}>
          Add
        </button>
      </form>
      <details>
        <summary>Edit every entry</summary>
        <Field label={`Entries of ${list.name}, one per line`}>
          {(control) => <textarea {...control} rows={6} value={text} onInput={(e) => setText(e.currentTarget.value)} />}
        </Field>
        <button type="button" disabled={action.busy} onClick={() => void save(parseEntries(text), `${list.name} saved.`)}>
          Save entries
        </button>
      </details>
      <button type="button" class="danger" onClick={onDelete}>
        Delete list
      </button>
    </article>
  );
}
