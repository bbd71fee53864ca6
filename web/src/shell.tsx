import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { ToastRegion } from './components/toast.tsx';
import { BASE, contextOfPath, inContext, to } from './paths.ts';
import { NAV } from './routes.tsx';
import { signOut, useSession } from './session.ts';
import type { Membership } from './session.ts';
import { homePath } from './routes.tsx';

/** The signed-in frame: header with the context switcher, the navigation, and the screen in <main>. */
export function Shell({ children }: { children: ComponentChildren }) {
  const { session, context } = useSession();
  const { path, route } = useLocation();
  const [menuOpen, setMenuOpen] = useState(false);
  // The phone menu closes once a destination is chosen.
  useEffect(() => setMenuOpen(false), [path]);
  if (!session) return null;
  const entries = NAV.filter((entry) => context && entry.kinds.includes(context.kind));
  const current = contextOfPath(path)?.rest ?? (path.slice(BASE.length) || '/');

  // The address names the context: switching is going to the other context's home.
  const onSwitch = (id: string) => {
    const next = session.memberships.find((m) => m.id === id);
    if (next) route(inContext(next, homePath(next.kind)));
  };

  return (
    <>
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <header class="app-header">
        <div class="app-bar container-fluid">
          <a class="brand" href={to('/')}>
            Linkplane
          </a>
          <ContextSwitcher memberships={session.memberships} current={context} onSwitch={onSwitch} />
          <button type="button" class="menu-toggle secondary outline" aria-expanded={menuOpen ? 'true' : 'false'} aria-controls="main-nav" onClick={() => setMenuOpen(!menuOpen)}>
            Menu
          </button>
        </div>
        <nav id="main-nav" class={`main-nav container-fluid${menuOpen ? ' open' : ''}`} aria-label="Main">
          <ul>
            {entries.map((entry) => {
              const active = current === entry.path || current.startsWith(`${entry.path}/`);
              return (
                <li key={entry.path}>
                  <a href={to(entry.path)} aria-current={active ? 'page' : undefined}>
                    {entry.label}
                  </a>
                </li>
              );
            })}
          </ul>
          <ul class="user-menu">
            <li>
              <a href="/docs" target="_blank" rel="noopener">
                API reference
              </a>
            </li>
            <li class="user-name" title={session.user.email}>
              {session.user.name || session.user.email}
            </li>
            <li>
              <button type="button" class="secondary outline" onClick={() => void signOut().finally(() => route(to('/sign-in')))}>
                Sign out
              </button>
            </li>
          </ul>
        </nav>
      </header>
      <main id="main" class="container" tabIndex={-1}>
        {context ? children : <NoMembership />}
      </main>
      <ToastRegion />
    </>
  );
}

function ContextSwitcher({ memberships, current, onSwitch }: { memberships: Membership[]; current: Membership | null; onSwitch: (id: string) => void }) {
  if (memberships.length === 0) return null;
  const workspaces = memberships.filter((m) => m.kind === 'workspace');
  const partners = memberships.filter((m) => m.kind === 'partner');
  return (
    <label class="context-switcher">
      <span class="visually-hidden">Workspace or partner in view</span>
      <select value={current?.id} onChange={(e) => onSwitch(e.currentTarget.value)}>
        {workspaces.length > 0 && (
          <optgroup label="Workspaces">
            {workspaces.map((m) => (
              <option key={m.id} value={m.id}>
                {m.name}
              </option>
            ))}
          </optgroup>
        )}
        {partners.length > 0 && (
          <optgroup label="Partners">
            {partners.map((m) => (
              <option key={m.id} value={m.id}>
                {m.name}
              </option>
            ))}
          </optgroup>
        )}
      </select>
    </label>
  );
}

function NoMembership() {
  return (
    <section>
      <h1>No workspace yet</h1>
      <p>Your account is not a member of any workspace or partner. Ask an owner to invite you.</p>
    </section>
  );
}
