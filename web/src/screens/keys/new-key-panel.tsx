import { useEffect, useRef } from 'preact/hooks';
import { CopyButton } from '../../components/copy-button.tsx';
import type { CreatedKey } from './key-types.ts';

/** The new key's value, shown this once: focus lands here so nobody misses it. */
export function NewKeyPanel({ created, onDone }: { created: CreatedKey; onDone: () => void }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), [created]);
  return (
    <article class="new-key" aria-labelledby="new-key-title">
      <h2 id="new-key-title" tabIndex={-1} ref={heading}>
        Key “{created.record.name ?? created.record.prefix}” created
      </h2>
      <p id="new-key-warning">
        <strong>Copy it now: it is shown only this once.</strong> Only its first characters are kept where anyone can read them; if it is lost, create another and revoke
        this one.
      </p>
      <label for="new-key-value">Key value</label>
      <div class="new-key-value">
        <input id="new-key-value" type="text" readOnly value={created.key} aria-describedby="new-key-warning" onFocus={(e) => e.currentTarget.select()} spellcheck={false} />
        <CopyButton value={created.key} what="the key" />
      </div>
      <button type="button" onClick={onDone}>
        I have copied it
      </button>
    </article>
  );
}
