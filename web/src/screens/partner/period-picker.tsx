import { Field } from '../../components/field.tsx';

/** A calendar month in UTC (`YYYY-MM`), the API's `period`. */
export function PeriodPicker({ value, onChange }: { value: string; onChange: (period: string) => void }) {
  return (
    <Field label="Month (UTC)">
      {(control) => (
        <input
          {...control}
          type="month"
          name="period"
          value={value}
          onChange={(e) => {
            // An emptied field keeps the last month rather than asking the API for an invalid period.
            if (/^\d{4}-\d{2}$/.test(e.currentTarget.value)) onChange(e.currentTarget.value);
          }}
        />
      )}
    </Field>
  );
}
