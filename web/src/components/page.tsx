import type { ComponentChildren } from 'preact';
import { useEffect, useLayoutEffect, useRef } from 'preact/hooks';

interface PageProps {
  title: string;
  /** Buttons or links shown beside the heading (create, export...). */
  actions?: ComponentChildren;
  children?: ComponentChildren;
}

/**
 * A screen's frame: its heading, the document title, and focus on the heading when the screen appears, so a
 * screen-reader or keyboard user lands at the top of the new content after every navigation.
 */
export function Page({ title, actions, children }: PageProps) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${title} · Linkplane`;
  }, [title]);
  // Before the first paint, not after it: otherwise the screen shows for a moment with focus still on the link that
  // opened it, and a keyboard user (or a test) acting in that moment acts on the navigation.
  useLayoutEffect(() => {
    heading.current?.focus({ preventScroll: false });
  }, []);
  return (
    // Not a named region: <main> is the landmark, and a region named like the screen's own table ("Links") would
    // be a second landmark with the same name.
    <section class="page">
      <header class="page-header">
        <h1 id="page-title" tabIndex={-1} ref={heading}>
          {title}
        </h1>
        {actions && <div class="page-actions">{actions}</div>}
      </header>
      {children}
    </section>
  );
}
