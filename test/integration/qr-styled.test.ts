import { expect } from 'chai';
import { PNG } from 'pngjs';
import jpeg from 'jpeg-js';
import jsQRModule from 'jsqr';
import { Resvg } from '@resvg/resvg-js';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { testEnv } from '../helpers/env.ts';
import { startApi, type RunningApi } from '../helpers/api.ts';
import { Tenants, bearer } from '../helpers/tenants.ts';
import { callApi, expectInvalid, expectRefused, type Reply } from '../helpers/http.ts';

// jsqr is CommonJS: under NodeNext its function is the default export's `default`.
const jsQR = jsQRModule.default;

interface Decoded {
  data: string;
  version: number;
}

/** Raster of a PNG body, or of an SVG body drawn by resvg at its own width (as a browser would show it). */
function raster(body: Buffer, contentType: string): { width: number; height: number; rgba: Uint8ClampedArray } {
  if (contentType.startsWith('image/svg+xml')) {
    const image = new Resvg(body.toString('utf8'), { fitTo: { mode: 'original' } }).render();
    return { width: image.width, height: image.height, rgba: new Uint8ClampedArray(image.pixels) };
  }
  expect(contentType).to.equal('image/png');
  const png = PNG.sync.read(body);
  return { width: png.width, height: png.height, rgba: new Uint8ClampedArray(png.data) };
}

/** Reads the code the way a phone does, dark modules on light only (inverted codes are not tried). */
function decode(body: Buffer, contentType: string): Decoded | null {
  const { width, height, rgba } = raster(body, contentType);
  const result = jsQR(rgba, width, height, { inversionAttempts: 'dontInvert' });
  return result && { data: result.data, version: result.version };
}

/** A logo: a filled disc of `rgb` on transparency (PNG) or on white (JPEG). */
function discPixels(side: number, rgb: [number, number, number], transparent: boolean): Buffer {
  const data = Buffer.alloc(side * side * 4);
  const r = side / 2;
  for (let y = 0; y < side; y++) {
    for (let x = 0; x < side; x++) {
      const inside = (x + 0.5 - r) ** 2 + (y + 0.5 - r) ** 2 <= r * r;
      const at = (y * side + x) * 4;
      const [cr, cg, cb] = inside ? rgb : [255, 255, 255];
      data[at] = cr;
      data[at + 1] = cg;
      data[at + 2] = cb;
      data[at + 3] = inside || !transparent ? 255 : 0;
    }
  }
  return data;
}

function aPng(side: number, rgb: [number, number, number] = [200, 0, 0]): Buffer {
  const png = new PNG({ width: side, height: side });
  discPixels(side, rgb, true).copy(png.data);
  return PNG.sync.write(png);
}

function aJpeg(side: number, rgb: [number, number, number] = [0, 90, 200]): Buffer {
  return jpeg.encode({ width: side, height: side, data: discPixels(side, rgb, false) }, 90).data;
}

/** A PNG of noise: incompressible, so a few hundred pixels a side are over 100 KiB. */
function aNoisyPng(side: number): Buffer {
  const png = new PNG({ width: side, height: side });
  let seed = 12345;
  for (let i = 0; i < png.data.length; i++) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    png.data[i] = seed >> 16;
  }
  return PNG.sync.write(png);
}

describe('Styled QR codes over HTTP', function () {
  this.timeout(180_000);
  let mongo: TestMongo;
  let running: RunningApi;
  let tenants: Tenants;
  let key: string;
  let readOnlyKey: string;
  let linkId: string;
  let shortUrl: string;

  before(async () => {
    mongo = await startTestMongo();
    running = await startApi(testEnv(mongo, { SHORT_LINK_BASE_URL: 'https://lnk.test', DEFAULT_SHORT_DOMAIN: 'lnk.test' }));
    tenants = await Tenants.open(mongo);
    const ws = await tenants.aWorkspace({ plan_id: 'business' });
    key = (await tenants.aWorkspaceKey(ws._id)).key;
    readOnlyKey = (await tenants.aWorkspaceKey(ws._id, ['links:read', 'workspace:read'])).key;
    const created = await call('POST', '/links', { url: 'https://example.com/styled-qr' });
    expect(created.status).to.equal(201);
    linkId = String(created.body.id);
    shortUrl = String(created.body.short_url);
  });

  after(async () => {
    await tenants.close();
    await running.stop();
    await mongo.stop();
  });

  const call = (method: string, path: string, body?: unknown, as: string = key, headers: Record<string, string> = {}): Promise<Reply> =>
    callApi(running.url, method, path, { key: as, body, headers });

  const uploadLogo = (contentType: string, data: Buffer, as = key): Promise<Reply> =>
    call('PUT', '/workspace/qr-logo', { content_type: contentType, data: data.toString('base64') }, as);

  async function qr(query: string, headers: Record<string, string> = {}): Promise<{ status: number; body: Buffer; contentType: string; etag: string }> {
    const res = await fetch(`${running.url}/v1/links/${linkId}/qr?${query}`, { headers: { ...bearer(key), ...headers } });
    return { status: res.status, body: Buffer.from(await res.arrayBuffer()), contentType: res.headers.get('content-type') ?? '', etag: res.headers.get('etag') ?? '' };
  }

  async function decodedQr(query: string): Promise<Decoded & { body: Buffer; contentType: string }> {
    const image = await qr(query);
    expect(image.status, `${query}: ${image.body.toString('utf8').slice(0, 300)}`).to.equal(200);
    const decoded = decode(image.body, image.contentType);
    expect(decoded?.data, `${query} decodes to the short URL`).to.equal(shortUrl);
    return { ...decoded!, body: image.body, contentType: image.contentType };
  }

  describe('options without a logo', () => {
    for (const format of ['png', 'svg']) {
      it(`decodes ${format.toUpperCase()} codes in colours, given with and without #`, async () => {
        for (const colours of ['color=1a237e&background=fff8e1', 'color=%23004D40&background=%23E0F2F1', 'color=595959&background=ffffff', 'background=ffeb3b']) {
          const { body } = await decodedQr(`format=${format}&${colours}`);
          if (format === 'svg') {
            const [, color = '000000'] = /color=(?:%23)?([0-9A-Fa-f]{6})/.exec(colours) ?? [];
            expect(body.toString('utf8')).to.contain(`#${color.toLowerCase()}`);
          }
        }
      });

      it(`decodes ${format.toUpperCase()} codes at every error-correction level, the higher levels needing more modules`, async () => {
        const versions: number[] = [];
        for (const level of ['L', 'M', 'Q', 'H']) versions.push((await decodedQr(`format=${format}&error_correction=${level}`)).version);
        for (let i = 1; i < versions.length; i++) expect(versions[i]).to.be.at.least(versions[i - 1]!);
        expect(versions[3]).to.be.above(versions[0]!);
      });

      it(`decodes ${format.toUpperCase()} codes with the smallest and largest margins, in colour`, async () => {
        for (const margin of [0, 1, 16]) await decodedQr(`format=${format}&margin=${margin}&color=3e2723&background=fff3e0&size=400`);
      });
    }

    it('draws the PNG in exactly the two colours asked for', async () => {
      const image = await qr('color=1a237e&background=fff8e1');
      const { rgba } = raster(image.body, image.contentType);
      const seen = new Set<string>();
      for (let i = 0; i < rgba.length; i += 4) seen.add(`${rgba[i]},${rgba[i + 1]},${rgba[i + 2]},${rgba[i + 3]}`);
      expect([...seen].sort()).to.deep.equal(['255,248,225,255', '26,35,126,255']);
    });

    it('refuses bad colours, low contrast, inverted codes and unknown levels with 422 naming the field', async () => {
      expectInvalid(await call('GET', `/links/${linkId}/qr?color=red`), 'color');
      expectInvalid(await call('GET', `/links/${linkId}/qr?color=12345`), 'color');
      expectInvalid(await call('GET', `/links/${linkId}/qr?background=%23ggffff`), 'background');
      // #aaaaaa on white is 2.3:1.
      const low = await call('GET', `/links/${linkId}/qr?color=aaaaaa`);
      expectInvalid(low, 'color');
      expect(low.body.error!.details![0]!.message).to.match(/contrast .* 2\.3\d:1/);
      // 3.2:1 by WCAG, but too close in brightness for a scanner's binariser.
      const dim = await call('GET', `/links/${linkId}/qr?color=332f36&background=d117f8`);
      expectInvalid(dim, 'color');
      expect(dim.body.error!.details![0]!.message).to.contain('apart in brightness');
      // A dark background alone: the modules (black) are no longer darker than it.
      expectInvalid(await call('GET', `/links/${linkId}/qr?background=333333`), 'background');
      // Inverted: white modules on black, contrast 21:1, still refused.
      const inverted = await call('GET', `/links/${linkId}/qr?color=ffffff&background=000000`);
      expectInvalid(inverted, 'color');
      expect(inverted.body.error!.details![0]!.message).to.contain('darker');
      expectInvalid(await call('GET', `/links/${linkId}/qr?error_correction=X`), 'error_correction');
      expectInvalid(await call('GET', `/links/${linkId}/qr?error_correction=h`), 'error_correction');
      expectInvalid(await call('GET', `/links/${linkId}/qr?logo=yes`), 'logo');
    });
  });

  describe('the workspace logo', () => {
    it('answers 409 conflict for logo=true while no logo is uploaded, and 404 on reading or removing it', async () => {
      expectRefused(await call('GET', `/links/${linkId}/qr?logo=true`), 409, 'conflict');
      expectRefused(await call('GET', '/workspace/qr-logo'), 404, 'not_found');
      expectRefused(await call('DELETE', '/workspace/qr-logo'), 404, 'not_found');
    });

    it('refuses an upload with a read-only key (403 insufficient_scope)', async () => {
      expectRefused(await uploadLogo('image/png', aPng(64), readOnlyKey), 403, 'insufficient_scope');
    });

    it('refuses images that are too big, too large or too small, damaged, of another type than declared, or SVG', async () => {
      const oversize = aNoisyPng(200);
      expect(oversize.length).to.be.above(100 * 1024);
      expectInvalid(await uploadLogo('image/png', oversize), 'data');
      // Tiny files that declare a huge image: refused from the header, never decoded.
      expectInvalid(await uploadLogo('image/png', PNG.sync.write(new PNG({ width: 2000, height: 2000 }))), 'data');
      expectInvalid(await uploadLogo('image/png', PNG.sync.write(new PNG({ width: 8, height: 8 }))), 'data');
      expectInvalid(await uploadLogo('image/jpeg', jpeg.encode({ width: 1100, height: 20, data: Buffer.alloc(1100 * 20 * 4, 128) }, 50).data), 'data');
      // Wrong magic bytes: a GIF, plain text, an SVG (scripts), a PNG declared as JPEG.
      expectInvalid(await uploadLogo('image/png', Buffer.from('GIF89a\x10\x00\x10\x00\x80\x00\x00\xff\xff\xff\x00\x00\x00!\xf9', 'latin1')), 'data');
      expectInvalid(await uploadLogo('image/png', Buffer.from('definitely not an image')), 'data');
      const svg = await uploadLogo('image/png', Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64"><script>alert(1)</script></svg>'));
      expectInvalid(svg, 'data');
      expect(svg.body.error!.details![0]!.message).to.contain('SVG');
      expectInvalid(await uploadLogo('image/jpeg', aPng(64)), 'content_type');
      // SVG is not among the accepted types at all.
      expectInvalid(await call('PUT', '/workspace/qr-logo', { content_type: 'image/svg+xml', data: Buffer.from('<svg/>').toString('base64') }), 'content_type');
      // A PNG cut short: the header is fine, the image does not decode.
      const whole = aPng(64);
      expectInvalid(await uploadLogo('image/png', whole.subarray(0, whole.length - 40)), 'data');
      expectInvalid(await call('PUT', '/workspace/qr-logo', { content_type: 'image/png', data: 'not base64!' }), 'data');
      expectInvalid(await call('PUT', '/workspace/qr-logo', { content_type: 'image/png', data: '' }), 'data');
      expectRefused(await call('GET', '/workspace/qr-logo'), 404, 'not_found');
    });

    it('stores a PNG logo and reads it back', async () => {
      const png = aPng(96);
      const put = await uploadLogo('image/png', png);
      expect(put.status, JSON.stringify(put.body)).to.equal(200);
      expect(put.body).to.deep.include({ content_type: 'image/png', width: 96, height: 96, bytes: png.length, data: png.toString('base64') });
      expect(put.body.sha256).to.match(/^[0-9a-f]{64}$/);
      expect((await call('GET', '/workspace/qr-logo', undefined, readOnlyKey)).body).to.deep.equal(put.body);
    });

    it('decodes PNG and SVG codes with the PNG logo at the default and every higher level, in colour and at every margin', async () => {
      await uploadLogo('image/png', aPng(96));
      const without = await decodedQr('format=png');
      for (const format of ['png', 'svg']) {
        for (const extra of ['', '&error_correction=L', '&error_correction=Q', '&error_correction=H', '&color=1a237e&background=fff8e1', '&margin=0', '&margin=16&size=600', '&preset=print']) {
          await decodedQr(`format=${format}&logo=true${extra}`);
        }
      }
      // The level is raised to at least Q: the default (M) with a logo has the modules of Q.
      const raised = await decodedQr('format=png&logo=true');
      expect(raised.version).to.equal((await decodedQr('format=png&error_correction=Q')).version);
      expect(raised.version).to.be.above(without.version);
    });

    it('draws the logo in the centre of the PNG and embeds its bytes in the SVG', async () => {
      const png = aPng(96, [200, 0, 0]);
      await uploadLogo('image/png', png);
      const image = await qr('format=png&logo=true&size=512');
      const { width, rgba } = raster(image.body, image.contentType);
      const centre = (Math.floor(width / 2) * width + Math.floor(width / 2)) * 4;
      expect([rgba[centre], rgba[centre + 1], rgba[centre + 2]]).to.deep.equal([200, 0, 0]);
      const svg = (await qr('format=svg&logo=true')).body.toString('utf8');
      expect(svg).to.contain(`href="data:image/png;base64,${png.toString('base64')}"`);
      expect(svg).not.to.contain('<script');
    });

    it('decodes PNG and SVG codes with a JPEG logo', async () => {
      const put = await uploadLogo('image/jpeg', aJpeg(120));
      expect(put.status, JSON.stringify(put.body)).to.equal(200);
      expect(put.body).to.deep.include({ content_type: 'image/jpeg', width: 120, height: 120 });
      for (const format of ['png', 'svg']) {
        for (const extra of ['', '&error_correction=H', '&color=004d40&background=e0f2f1', '&size=1024']) await decodedQr(`format=${format}&logo=true${extra}`);
      }
      const image = await qr('format=png&logo=true&size=512');
      const { width, rgba } = raster(image.body, image.contentType);
      const centre = (Math.floor(width / 2) * width + Math.floor(width / 2)) * 4;
      // JPEG is lossy: the disc's blue, give or take.
      expect(rgba[centre + 2]).to.be.above(150);
      expect(rgba[centre]).to.be.below(40);
      expect((await qr('format=svg&logo=true')).body.toString('utf8')).to.contain('href="data:image/jpeg;base64,');
    });

    it('changes the ETag with every option and with a new logo, and answers 304 to the current one', async () => {
      await uploadLogo('image/png', aPng(96, [200, 0, 0]));
      const queries = [
        'format=png', 'format=svg', 'size=300', 'margin=1', 'error_correction=L', 'error_correction=H', 'color=1a237e',
        'background=fff8e1', 'color=1a237e&background=fff8e1', 'logo=true', 'logo=true&format=svg', 'logo=true&error_correction=H',
      ];
      const etags = new Map<string, string>();
      for (const query of queries) {
        const image = await qr(query);
        expect(image.status, query).to.equal(200);
        expect(image.etag, query).to.match(/^"[A-Za-z0-9_-]+"$/);
        etags.set(query, image.etag);
      }
      expect(new Set(etags.values()).size, JSON.stringify([...etags])).to.equal(queries.length);
      for (const query of queries) expect((await qr(query, { 'If-None-Match': etags.get(query)! })).status, query).to.equal(304);

      // A new logo: codes with the logo change (and the old ETag no longer matches), codes without it do not.
      await uploadLogo('image/png', aPng(96, [0, 120, 0]));
      for (const query of ['logo=true', 'logo=true&format=svg', 'logo=true&error_correction=H']) {
        const image = await qr(query, { 'If-None-Match': etags.get(query)! });
        expect(image.status, query).to.equal(200);
        expect(image.etag, query).not.to.equal(etags.get(query));
        expect(decode(image.body, image.contentType)?.data, query).to.equal(shortUrl);
      }
      const { width, rgba } = raster((await qr('logo=true&size=512')).body, 'image/png');
      const centre = (Math.floor(width / 2) * width + Math.floor(width / 2)) * 4;
      expect([rgba[centre], rgba[centre + 1], rgba[centre + 2]]).to.deep.equal([0, 120, 0]);
      expect((await qr('format=png', { 'If-None-Match': etags.get('format=png')! })).status).to.equal(304);
    });

    it('removes the logo: logo=true then answers 409 again', async () => {
      await uploadLogo('image/png', aPng(64));
      expect((await call('DELETE', '/workspace/qr-logo')).status).to.equal(204);
      expectRefused(await call('GET', `/links/${linkId}/qr?logo=true`), 409, 'conflict');
      expect((await qr('format=png')).status).to.equal(200);
    });
  });
});
