// Inputs the link editor needs beyond the native ones: typed lists, optional numbers, groups of checkboxes.
import { useState } from 'preact/hooks';
import type { ComponentChildren } from 'preact';
import { useId } from 'preact/hooks';
import type { FieldControlProps } from '../../components/field.tsx';
import { parseList } from './link-draft.ts';

/**
 * A comma-separated list in a text input. It keeps the text as typed (a trailing comma, a half-typed item) and
 * reports the parsed items on every keystroke.
 */
export function ListInput({
  control,
  value,
  onChange,
  transform,
  placeholder,
  numeric,
}: {
  control: FieldControlProps;
  value: readonly (string | number)[] | undefined;
  onChange: (items: string[]) => void;
  transform?: (item: string) => string;
  placeholder?: string;
  numeric?: boolean;
}) {
  const [text, setText] = useState((value ?? []).join(', '));
  return (
    <input
      {...control}
      type="text"
      inputMode={numeric ? 'numeric' : undefined}
      value={text}
      placeholder={placeholder}
      onInput={(e) => {
        setText(e.currentTarget.value);
        onChange(parseList(e.currentTarget.value, transform));
      }}
    />
  );
}

/** An optional whole number: empty means "not set". */
export function NumberInput({
  control,
  value,
  onChange,
  min,
  max,
}: {
  control: FieldControlProps;
  value: number | undefined | null;
  onChange: (n: number | undefined) => void;
  min?: number;
  max?: number;
}) {
  return (
    <input
      {...control}
      type="number"
      inputMode="numeric"
      min={min}
      max={max}
      value={value ?? ''}
      onInput={(e) => {
        const raw = e.currentTarget.value;
        onChange(raw === '' ? undefined : Number(raw));
      }}
    />
  );
}

/** A set of checkboxes in a fieldset whose legend names the choice; the error is announced and linked. */
export function CheckboxGroup<T extends string | number>({
  legend,
  options,
  value,
  onChange,
  error,
}: {
  legend: ComponentChildren;
  options: readonly { value: T; label: string }[];
  value: readonly T[] | undefined;
  onChange: (next: T[]) => void;
  error?: string;
}) {
  const id = useId();
  const selected = new Set(value ?? []);
  return (
    <fieldset class="checkbox-group" aria-describedby={error ? `${id}-error` : undefined} aria-invalid={error ? 'true' : undefined}>
      <legend>{legend}</legend>
      {options.map((option) => (
        <label key={String(option.value)}>
          <input
            type="checkbox"
            checked={selected.has(option.value)}
            onChange={(e) => {
              const next = new Set(selected);
              if (e.currentTarget.checked) next.add(option.value);
              else next.delete(option.value);
              onChange(options.map((o) => o.value).filter((v) => next.has(v)));
            }}
          />
          {option.label}
        </label>
      ))}
      {error && (
        <small id={`${id}-error`} class="field-error" role="alert">
          {error}
        </small>
      )}
    </fieldset>
  );
}

/** Buttons that move or remove one item of an ordered list, named after the item for screen readers. */
export function ItemControls({ name, index, count, onMove, onRemove }: { name: string; index: number; count: number; onMove: (from: number, to: number) => void; onRemove: () => void }) {
  return (
    <div class="item-controls" role="group" aria-label={`${name}: order and removal`}>
      <button type="button" class="secondary outline" onClick={() => onMove(index, index - 1)} disabled={index === 0} aria-label={`Move ${name} up`}>
        ↑
      </button>
      <button type="button" class="secondary outline" onClick={() => onMove(index, index + 1)} disabled={index === count - 1} aria-label={`Move ${name} down`}>
        ↓
      </button>
      <button type="button" class="secondary outline" onClick={onRemove} aria-label={`Remove ${name}`}>
        Remove
      </button>
    </div>
  );
}

export function move<T>(items: readonly T[], from: number, to: number): T[] {
  if (to < 0 || to >= items.length) return [...items];
  const next = [...items];
  const [item] = next.splice(from, 1);
  next.splice(to, 0, item!);
  return next;
}

export function replaceAt<T>(items: readonly T[], index: number, item: T): T[] {
  return items.map((existing, i) => (i === index ? item : existing));
}
