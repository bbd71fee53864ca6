import { useEffect, useState } from 'preact/hooks';
import { ApiError, api } from '../../api.ts';
import { ErrorBanner } from '../../components/error-banner.tsx';
import { toast } from '../../components/toast.tsx';
import { useAction, useResource } from '../../components/use-resource.ts';

interface QrLogo {
  content_type: 'image/png' | 'image/jpeg';
  data: string;
  width: number;
  height: number;
  bytes: number;
  sha256: string;
  updated_at: string;
}

const ACCEPTED = ['image/png', 'image/jpeg'] as const;

/** Base64 of a file's bytes, for the JSON body of PUT /v1/workspace/qr-logo. */
async function base64Of(file: File): Promise<string> {
  const bytes = new Uint8Array(await file.arrayBuffer());
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

/** An object URL of the stored logo (the CSP allows blob: images). */
function useLogoUrl(logo: QrLogo | null | undefined): string | null {
  const [url, setUrl] = useState<string | null>(null);
  useEffect(() => {
    if (!logo) {
      setUrl(null);
      return undefined;
    }
    const bytes = Uint8Array.from(atob(logo.data), (c) => c.charCodeAt(0));
    const next = URL.createObjectURL(new Blob([bytes], { type: logo.content_type }));
    setUrl(next);
    return () => URL.revokeObjectURL(next);
  }, [logo?.sha256]);
  return url;
}

/** The workspace's QR logo: what QR codes draw in their centre when asked "with the workspace logo". */
export function QrLogoSettings({ workspaceId, canEdit }: { workspaceId: string; canEdit: boolean }) {
  const current = useResource(async (signal) => {
    try {
      return await api.get<QrLogo>('/v1/workspace/qr-logo', undefined, signal);
    } catch (failure) {
      if (failure instanceof ApiError && failure.status === 404) return null;
      throw failure;
    }
  }, workspaceId);
  const action = useAction();
  const url = useLogoUrl(current.data);

  const upload = async (file: File | undefined) => {
    if (!file) return;
    const contentType = (ACCEPTED as readonly string[]).includes(file.type) ? file.type : 'image/png';
    const stored = await action.run(async () => api.put<QrLogo>('/v1/workspace/qr-logo', { content_type: contentType, data: await base64Of(file) }));
    if (!stored) return;
    current.set(stored);
    toast('QR logo saved.');
  };

  const remove = async () => {
    const done = await action.run(async () => {
      await api.delete('/v1/workspace/qr-logo');
      return true;
    });
    if (!done) return;
    current.set(null);
    toast('QR logo removed.');
  };

  return (
    <section aria-labelledby="ws-qr-logo" class="qr-logo">
      <h2 id="ws-qr-logo">QR logo</h2>
      <p>
        Drawn in the centre of QR codes asked for with the workspace logo. PNG or JPEG, at most 100 KiB, 16 to 1024 pixels a side; SVG is not accepted.
      </p>
      <ErrorBanner error={current.error} title="The QR logo could not be loaded" />
      {action.error !== null && <ErrorBanner error={action.error} title="The QR logo was not changed" />}
      {current.data && url && (
        <p>
          <img src={url} alt="The workspace QR logo" /> {current.data.width}×{current.data.height} px, {current.data.bytes} bytes
        </p>
      )}
      {current.data === null && <p>No logo uploaded.</p>}
      {!canEdit && <p>Only owners change the QR logo.</p>}
      <label>
        Upload a QR logo
        <input type="file" name="qr_logo" accept="image/png,image/jpeg" disabled={!canEdit || action.busy} onChange={(e) => void upload(e.currentTarget.files?.[0])} />
      </label>
      {current.data && (
        <button type="button" class="secondary" disabled={!canEdit || action.busy} onClick={() => void remove()}>
          Remove the QR logo
        </button>
      )}
    </section>
  );
}
