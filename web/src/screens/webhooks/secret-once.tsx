import { useEffect, useRef } from 'preact/hooks';
import { CopyButton } from '../../components/copy-button.tsx';

/**
 * A signing secret the api returns only once: shown with a copy button and a plain warning, and focused so a
 * screen-reader user hears it at once.
 */
export function SecretOnce({ secret, title, note, onDone }: { secret: string; title: string; note?: string; onDone: () => void }) {
  const box = useRef<HTMLElement>(null);
  useEffect(() => box.current?.focus(), []);
  return (
    <article class="secret-once" tabIndex={-1} ref={box} aria-labelledby="secret-once-title">
      <h2 id="secret-once-title">{title}</h2>
      <p>
        Copy the signing secret now: it is shown only this once. Receivers verify <code>X-Service-Signature</code> with it.
      </p>
      <p class="secret-value">
        <code data-testid="webhook-secret">{secret}</code>
      </p>
      {note && <p>{note}</p>}
      <div class="form-actions">
        <CopyButton value={secret} what="signing secret" />
        <button type="button" onClick={onDone}>
          I have stored it
        </button>
      </div>
    </article>
  );
}
