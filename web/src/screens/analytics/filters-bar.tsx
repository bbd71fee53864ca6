import { useState } from 'preact/hooks';
import { LINK_FILTERS, VISITOR_FILTERS, dimensionLabel } from './analytics-params.ts';

interface FiltersBarProps {
  filters: Record<string, string>;
  partner: boolean;
  onChange: (filters: Record<string, string>) => void;
}

const VISITOR: ReadonlySet<string> = new Set(VISITOR_FILTERS);

/**
 * The filters in force, each removable, and a form adding one. The api takes one visitor filter per request, so
 * once one is set the others leave the list; link filters combine with everything.
 */
export function FiltersBar({ filters, partner, onChange }: FiltersBarProps) {
  const active = Object.entries(filters);
  const hasVisitorFilter = active.some(([name]) => VISITOR.has(name));
  const names = [...LINK_FILTERS.filter((n) => partner || n !== 'client_id'), ...(hasVisitorFilter ? [] : VISITOR_FILTERS)].filter((n) => !(n in filters));
  const [name, setName] = useState<string>('');
  const [value, setValue] = useState('');
  const chosen = names.includes(name as never) ? name : (names[0] ?? '');

  const remove = (key: string) => {
    const next = { ...filters };
    delete next[key];
    onChange(next);
  };

  return (
    <section class="filters" aria-labelledby="filters-title">
      <h2 id="filters-title" class="visually-hidden">
        Filters
      </h2>
      {active.length > 0 && (
        <ul class="filter-chips" aria-label="Filters in force">
          {active.map(([key, v]) => (
            <li key={key}>
              <span>
                {dimensionLabel(key)}: <strong>{v}</strong>
              </span>
              <button type="button" class="secondary outline" onClick={() => remove(key)} aria-label={`Remove the filter ${dimensionLabel(key)} ${v}`}>
                Remove
              </button>
            </li>
          ))}
        </ul>
      )}
      {names.length > 0 && (
        <details>
          <summary>Add a filter</summary>
          <form
            class="filter-form"
            onSubmit={(e) => {
              e.preventDefault();
              const trimmed = value
                .split(',')
                .map((v) => v.trim())
                .filter(Boolean)
                .join(',');
              if (!chosen || !trimmed) return;
              onChange({ ...filters, [chosen]: chosen === 'country' ? trimmed.toUpperCase() : trimmed });
              setValue('');
            }}
          >
            <label>
              Filter on
              <select value={chosen} onChange={(e) => setName(e.currentTarget.value)}>
                {names.map((n) => (
                  <option key={n} value={n}>
                    {dimensionLabel(n)}
                  </option>
                ))}
              </select>
            </label>
            <label>
              Values (comma-separated)
              <input type="text" value={value} required onInput={(e) => setValue(e.currentTarget.value)} placeholder={chosen === 'country' ? 'US,DE' : ''} />
            </label>
            <button type="submit">Apply filter</button>
          </form>
        </details>
      )}
    </section>
  );
}
