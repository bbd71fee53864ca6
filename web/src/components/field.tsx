import type { ComponentChildren, VNode } from 'preact';
import { useId } from 'preact/hooks';

/** What the control inside a Field must spread onto itself: its id, its description and its validity. */
export interface FieldControlProps {
  id: string;
  'aria-describedby'?: string;
  'aria-invalid'?: 'true';
}

interface FieldProps {
  label: ComponentChildren;
  /** The error for this field (usually `ApiError.fieldError(path)`), announced and linked to the control. */
  error?: string | null;
  hint?: ComponentChildren;
  children: (control: FieldControlProps) => VNode;
}

/**
 * A label, its control and the text that describes it. The control gets `aria-describedby` pointing at the hint
 * and the error, and `aria-invalid` when there is an error, which Pico CSS also colours.
 */
export function Field({ label, error, hint, children }: FieldProps) {
  const id = useId();
  const hintId = `${id}-hint`;
  const errorId = `${id}-error`;
  const describedBy = [error ? errorId : null, hint ? hintId : null].filter(Boolean).join(' ') || undefined;
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {children({ id, 'aria-describedby': describedBy, 'aria-invalid': error ? 'true' : undefined })}
      {error && (
        <small id={errorId} class="field-error" role="alert">
          {error}
        </small>
      )}
      {hint && <small id={hintId}>{hint}</small>}
    </div>
  );
}
