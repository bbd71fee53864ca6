import type { ComponentChildren } from 'preact';

/** What a list shows when it has nothing yet, with the action that fills it. */
export function EmptyState({ title, children, action }: { title: string; children?: ComponentChildren; action?: ComponentChildren }) {
  return (
    <article class="empty-state">
      <h2>{title}</h2>
      {children && <p>{children}</p>}
      {action}
    </article>
  );
}
