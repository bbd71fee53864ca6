import { useEffect, useState } from 'preact/hooks';
import { api, describeError } from '../../api.ts';
import { toast } from '../../components/toast.tsx';

/**
 * The link's QR code from GET /v1/links/{id}/qr. Fetched as a blob (the request needs the session's headers) and
 * shown through an object URL, which the CSP allows for images (img-src blob:).
 */
export function QrPreview({ linkId, slug, version }: { linkId: string; slug: string; version: string }) {
  const [src, setSrc] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let url: string | null = null;
    let cancelled = false;
    api.blob(`/v1/links/${linkId}/qr`, { format: 'png', preset: 'medium' }, 'image/png').then(
      (blob) => {
        if (cancelled) return;
        url = URL.createObjectURL(blob);
        setSrc(url);
      },
      (failure: unknown) => !cancelled && setError(describeError(failure)),
    );
    return () => {
      cancelled = true;
      if (url) URL.revokeObjectURL(url);
    };
  }, [linkId, version]);

  const download = async (format: 'png' | 'svg') => {
    try {
      const blob = await api.blob(`/v1/links/${linkId}/qr`, { format, preset: 'print' });
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

  return (
    <figure class="qr-preview">
      {src ? <img src={src} width={200} height={200} alt={`QR code of the short link ${slug}`} /> : error ? <p role="alert">{error}</p> : <p aria-busy="true">Drawing the QR code…</p>}
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
