import type { ComponentChildren } from 'preact';
import { useEffect, useId, useRef } from 'preact/hooks';

interface ConfirmDialogProps {
  open: boolean;
  title: string;
  children?: ComponentChildren;
  confirmLabel?: string;
  /** Styles the confirm button as destructive. */
  danger?: boolean;
  busy?: boolean;
  onConfirm: () => void;
  onCancel: () => void;
}

/**
 * A native modal <dialog>: the browser traps focus inside it, Escape cancels, and focus returns to the control
 * that opened it when it closes.
 */
export function ConfirmDialog({ open, title, children, confirmLabel = 'Confirm', danger, busy, onConfirm, onCancel }: ConfirmDialogProps) {
  const dialog = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const element = dialog.current;
    if (!element) return;
    if (open && !element.open) element.showModal();
    if (!open && element.open) element.close();
  }, [open]);
  return (
    <dialog ref={dialog} aria-labelledby={titleId} onCancel={(e) => (e.preventDefault(), onCancel())}>
      <article>
        <h2 id={titleId}>{title}</h2>
        {children}
        <footer>
          <button type="button" class="secondary" onClick={onCancel} disabled={busy}>
            Cancel
          </button>
          <button type="button" class={danger ? 'danger' : undefined} onClick={onConfirm} aria-busy={busy ? 'true' : undefined} disabled={busy}>
            {confirmLabel}
          </button>
        </footer>
      </article>
    </dialog>
  );
}
