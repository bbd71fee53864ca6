import { useEffect, useState } from 'preact/hooks';
import { ApiError, api, describeError } from '../../api.ts';
import type { ClickEvent } from '../../../../src/clicks/click-event.ts';

const KEPT = 50;
const RETRY_MS = 2000;

/**
 * The workspace's clicks as they happen (GET /v1/clicks/stream), newest first, the last 50. Paused by default; when
 * the stream breaks it reconnects after a moment with the last event id, so no click is missed in between.
 */
export function LiveFeed({ linkId }: { linkId: string | null }) {
  const [on, setOn] = useState(false);
  const [clicks, setClicks] = useState<ClickEvent[]>([]);
  const [problem, setProblem] = useState<string | null>(null);
  /** The stream is open: clicks from now on will show (before that, one made could be missed). */
  const [open, setOpen] = useState(false);

  useEffect(() => {
    if (!on) return;
    const controller = new AbortController();
    let lastEventId: string | null = null;
    let timer: ReturnType<typeof setTimeout> | null = null;
    const connect = () => {
      api
        .events('/v1/clicks/stream', linkId ? { link_id: linkId } : undefined, {
          lastEventId,
          signal: controller.signal,
          onOpen: () => setOpen(true),
          onEvent: (event) => {
            if (event.type !== 'click') return;
            lastEventId = event.id;
            setProblem(null);
            const click = JSON.parse(event.data) as ClickEvent;
            setClicks((list) => [click, ...list].slice(0, KEPT));
          },
        })
        .then(
          () => {
            if (controller.signal.aborted) return;
            setOpen(false);
            timer = setTimeout(connect, RETRY_MS);
          },
          (error: unknown) => {
            if (controller.signal.aborted) return;
            setOpen(false);
            setProblem(describeError(error));
            // A refusal (scope, context) will not change by trying again.
            if (error instanceof ApiError && error.status >= 400 && error.status < 500 && error.status !== 429) return;
            timer = setTimeout(connect, RETRY_MS);
          },
        );
    };
    connect();
    return () => {
      controller.abort();
      if (timer) clearTimeout(timer);
      setOpen(false);
    };
  }, [on, linkId]);

  return (
    <section aria-labelledby="live-feed-title" class="live-feed">
      <div class="section-header">
        <h2 id="live-feed-title">Live clicks</h2>
        <button type="button" class="secondary outline" aria-pressed={on ? 'true' : 'false'} onClick={() => setOn(!on)}>
          {on ? 'Pause' : 'Watch live'}
        </button>
      </div>
      {problem && (
        <p class="field-error" role="alert">
          {problem}
        </p>
      )}
      {on && !open && !problem && <p class="muted">Connecting…</p>}
      {on && open && clicks.length === 0 && !problem && <p class="muted">Waiting for the next click…</p>}
      {clicks.length > 0 && (
        <ol class="live-clicks" aria-live="polite" aria-label="Latest clicks, newest first">
          {clicks.map((click) => (
            <li key={click.id} data-testid="live-click">
              <time dateTime={click.ts}>{new Date(click.ts).toLocaleTimeString()}</time> <strong>/{click.slug}</strong>{' '}
              <span>{[click.visitor.country ?? 'unknown country', click.visitor.device, click.visitor.browser ?? click.visitor.bot_name].filter(Boolean).join(' · ')}</span>{' '}
              <span class="state-badge">{click.visitor.visitor_type.replace(/_/g, ' ')}</span>{' '}
              <span class="muted">
                {click.outcome === 'redirect' ? `→ ${click.destination ?? ''}` : click.outcome}
                {click.decision.step !== 'url' ? ` (${click.decision.step.replace(/_/g, ' ')})` : ''}
              </span>
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
