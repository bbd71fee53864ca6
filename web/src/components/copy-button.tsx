import { toast } from './toast.tsx';

/** Copies a value (a secret, a DNS record, a short URL) and says so in the status region. */
export function CopyButton({ value, label = 'Copy', what }: { value: string; label?: string; what?: string }) {
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      toast(`${what ?? 'Value'} copied to the clipboard.`);
    } catch {
      toast(`Could not copy: select the text and copy it by hand.`, 'error');
    }
  };
  return (
    <button type="button" class="secondary outline copy-button" onClick={() => void copy()} aria-label={what ? `${label} ${what}` : label}>
      {label}
    </button>
  );
}
