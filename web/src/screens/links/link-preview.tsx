import type { ApiError } from '../../api.ts';
import { Field } from '../../components/field.tsx';
import type { PreviewDraft } from './link-draft.ts';
import type { Link } from './link-types.ts';

/** What a network draws for the link: the card's text and image, and where it came from. */
interface Card {
  title: string;
  description: string | null;
  image: string | null;
  source: 'custom' | 'destination';
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

/** The card crawlers get: the custom one being edited, else the destination's tags as last read, else none. */
export function cardOf(preview: PreviewDraft, destination: Link['destination_preview']): Card | null {
  const title = preview.title.trim();
  if (title) return { title, description: preview.description.trim() || null, image: preview.image.trim() || null, source: 'custom' };
  if (destination && (destination.title || destination.description || destination.image)) {
    return { title: destination.title ?? '', description: destination.description, image: destination.image, source: 'destination' };
  }
  return null;
}

/**
 * The link's social preview: the fields, and the card as feeds (Facebook, LinkedIn, X: a large image above the
 * text) and chats (Slack, Discord: a bar, the text, a thumbnail) would draw it from the tags the redirect serves.
 */
export function PreviewEditor({
  value,
  onChange,
  destination,
  url,
  error,
}: {
  value: PreviewDraft;
  onChange: (preview: PreviewDraft) => void;
  destination: Link['destination_preview'];
  url: string;
  error: ApiError | null;
}) {
  const card = cardOf(value, destination);
  const site = hostOf(url);
  return (
    <div class="preview-editor">
      <p>
        Social networks and chat apps (Facebook, X, LinkedIn, Slack, Discord, Telegram, WhatsApp, iMessage…) are shown this card for the
        short link; people are redirected as usual. Without a title here, the destination's own tags are used once the server has read them.
      </p>
      <Field label="Card title" error={error?.fieldError('preview.title') ?? error?.fieldError('preview')}>
        {(control) => <input {...control} name="preview-title" maxLength={120} value={value.title} onInput={(e) => onChange({ ...value, title: e.currentTarget.value })} />}
      </Field>
      <Field label="Card description" error={error?.fieldError('preview.description')}>
        {(control) => <textarea {...control} name="preview-description" maxLength={300} value={value.description} onInput={(e) => onChange({ ...value, description: e.currentTarget.value })} />}
      </Field>
      <Field label="Card image URL" error={error?.fieldError('preview.image')} hint="An https URL; 1200 × 630 pixels suits most networks">
        {(control) => <input {...control} name="preview-image" type="url" placeholder="https://" maxLength={2048} value={value.image} onInput={(e) => onChange({ ...value, image: e.currentTarget.value })} />}
      </Field>
      {card === null ? (
        <p class="muted" data-testid="preview-none">
          No card yet: crawlers are redirected to the destination until it is read or a title is given here.
        </p>
      ) : (
        <div class="preview-cards" aria-label="How networks show the link">
          <figure class="preview-card preview-card-feed" data-testid="preview-feed">
            {card.image ? <img src={card.image} alt="" loading="lazy" referrerpolicy="no-referrer" /> : <div class="preview-card-noimage" aria-hidden="true" />}
            <figcaption>
              <small class="preview-card-site">{site.toUpperCase()}</small>
              <strong>{card.title}</strong>
              {card.description && <span>{card.description}</span>}
            </figcaption>
          </figure>
          <figure class="preview-card preview-card-chat" data-testid="preview-chat">
            <figcaption>
              <small class="preview-card-site">{site}</small>
              <strong>{card.title}</strong>
              {card.description && <span>{card.description}</span>}
            </figcaption>
            {card.image && <img src={card.image} alt="" loading="lazy" referrerpolicy="no-referrer" />}
          </figure>
          <p class="muted">{card.source === 'custom' ? 'Your card.' : "The destination's own card, as last read."}</p>
        </div>
      )}
    </div>
  );
}
