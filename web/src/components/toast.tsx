import { useEffect, useState } from 'preact/hooks';

interface ToastMessage {
  id: number;
  text: string;
  tone: 'info' | 'error';
}

let nextId = 1;
let messages: ToastMessage[] = [];
const listeners = new Set<(m: ToastMessage[]) => void>();

function publish(next: ToastMessage[]): void {
  messages = next;
  for (const listener of listeners) listener(messages);
}

/** Tells the person something happened (saved, copied, deleted); read out by screen readers through the status region. */
export function toast(text: string, tone: ToastMessage['tone'] = 'info', durationMs = 5000): void {
  const message = { id: nextId++, text, tone };
  publish([...messages, message]);
  setTimeout(() => publish(messages.filter((m) => m.id !== message.id)), durationMs);
}

/** The one live region of the app; the shell renders it once. */
export function ToastRegion() {
  const [current, setCurrent] = useState(messages);
  useEffect(() => {
    listeners.add(setCurrent);
    return () => {
      listeners.delete(setCurrent);
    };
  }, []);
  return (
    <div class="toasts" role="status" aria-live="polite">
      {current.map((m) => (
        <p key={m.id} class={`toast toast-${m.tone}`}>
          {m.text}
        </p>
      ))}
    </div>
  );
}
