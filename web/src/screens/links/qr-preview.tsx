import { useEffect, useState } from 'preact/hooks';
import { api, describeError } from '../../api.ts';
import { toast } from '../../components/toast.tsx';

type Level = 'L' | 'M' | 'Q' | 'H';

interface QrStyle {
  color: string;
  background: string;
  level: Level;
  logo: boolean;
}

const DEFAULT_STYLE: QrStyle = { color: '#000000', background: '#ffffff', level: 'M', logo: false };

/** The style as GET /v1/links/{id}/qr query parameters (colours without `#`, which would start a fragment). */
function styleQuery(style: QrStyle): Record<string, string> {
  return { color: style.color.slice(1), background: style.background.slice(1), error_correction: style.level, logo: String(style.logo) };
}

/**
 * The link's QR code from GET /v1/links/{id}/qr, with its colours, error correction and the workspace logo. Fetched
 * as a blob (the request needs the session's headers) and shown through an object URL, which the CSP allows for
 * images (img-src blob:). A style the api refuses (too little contrast, no logo uploaded) shows its message.
 */
export function QrPreview({ linkId, slug, version }: { linkId: string; slug: string; version: string }) {
  const [src, setSrc] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [style, setStyle] = useState<QrStyle>(DEFAULT_STYLE);
  useEffect(() => {
    let url: string | null = null;
    let cancelled = false;
    setError(null);
    api.blob(`/v1/links/${linkId}/qr`, { format: 'png', preset: 'medium', ...styleQuery(style) }, 'image/png').then(
      (blob) => {
        if (cancelled) return;
        url = URL.createObjectURL(blob);
        setSrc(url);
      },
      (failure: unknown) => {
        if (cancelled) return;
        setSrc(null);
        setError(describeError(failure));
      },
    );
    return () => {
      cancelled = true;
      if (url) URL.revokeObjectURL(url);
    };
  }, [linkId, version, style]);

  const download = async (format: 'png' | 'svg') => {
    try {
      const blob = await api.blob(`/v1/links/${linkId}/qr`, { format, preset: 'print', ...styleQuery(style) });
      const url = URL.createObjectURL(blob);
      const anchor = document.createElement('a');
      anchor.href = url;
      anchor.download = `${slug}-qr.${format}`;
      anchor.click();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    } catch (failure) {
      toast(`The QR code could not be downloaded: ${describeError(failure)}`, 'error');
    }
  };

  const change = (patch: Partial<QrStyle>) => setStyle((current) => ({ ...current, ...patch }));

  return (
    <figure class="qr-preview">
      {src ? <img src={src} width={200} height={200} alt={`QR code of the short link ${slug}`} /> : error ? <p role="alert">{error}</p> : <p aria-busy="true">Drawing the QR code…</p>}
      <fieldset class="qr-style">
        <legend>QR code style</legend>
        <label>
          Modules <input type="color" name="qr_color" value={style.color} onChange={(e) => change({ color: e.currentTarget.value })} />
        </label>
        <label>
          Background <input type="color" name="qr_background" value={style.background} onChange={(e) => change({ background: e.currentTarget.value })} />
        </label>
        <label>
          Error correction{' '}
          <select name="qr_error_correction" value={style.level} onChange={(e) => change({ level: e.currentTarget.value as Level })}>
            <option value="L">L (7 %)</option>
            <option value="M">M (15 %)</option>
            <option value="Q">Q (25 %)</option>
            <option value="H">H (30 %)</option>
          </select>
        </label>
        <label>
          <input type="checkbox" name="qr_logo" checked={style.logo} onChange={(e) => change({ logo: e.currentTarget.checked })} /> With the workspace logo
        </label>
      </fieldset>
      <figcaption>
        <button type="button" class="secondary" onClick={() => void download('png')}>
          Download PNG
        </button>{' '}
        <button type="button" class="secondary" onClick={() => void download('svg')}>
          Download SVG
        </button>
      </figcaption>
    </figure>
  );
}
