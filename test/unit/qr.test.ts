import { createHash } from 'node:crypto';
import { expect } from 'chai';
import jsQRModule from 'jsqr';
import { PNG } from 'pngjs';
import QRCode from 'qrcode';
import { QR_LOGO_SHARE, QR_MIN_CONTRAST, QR_PRESETS, QR_SIZE_MAX, QR_SIZE_MIN, clearQrCache, contrastRatio, logoPad, qrColourProblem, renderQr } from '../../src/links/qr.ts';
import type { QrImage, QrOptions } from '../../src/links/qr.ts';

// jsqr is a CommonJS bundle whose typings declare an ES default export; under NodeNext the default import is
// the module object, and the function is its `default` property (which the bundle also sets at runtime).
const jsQR = jsQRModule.default;

const SHORT = 'https://lnk.example.com/abc123';
// ~300 characters, mixed case and punctuation so it is encoded in byte mode like a real long URL.
const LONG = `https://lnk.example.com/campaigns/2025/Spring-Sale?${Array.from({ length: 21 }, (_, i) => `k${i}=Value_${i * 7}`).join('&')}`.slice(0, 300);
const PRESET_NAMES = Object.keys(QR_PRESETS) as (keyof typeof QR_PRESETS)[];

interface Raster {
  width: number;
  height: number;
  rgba: Uint8ClampedArray;
}

function readPng(image: QrImage): Raster {
  expect(image.contentType).to.equal('image/png');
  const png = PNG.sync.read(image.body);
  return { width: png.width, height: png.height, rgba: new Uint8ClampedArray(png.data.buffer, png.data.byteOffset, png.data.length) };
}

function decode(raster: Raster): { data: string; version: number } | null {
  const result = jsQR(raster.rgba, raster.width, raster.height);
  return result && { data: result.data, version: result.version };
}

function isDark(raster: Raster, x: number, y: number): boolean {
  const at = (y * raster.width + x) * 4;
  return raster.rgba[at] === 0;
}

/** Modules per side of the symbol the library builds for this text and level (no quiet zone). */
function moduleCount(text: string, errorCorrectionLevel: 'L' | 'M' | 'Q' | 'H'): number {
  return QRCode.create(text, { errorCorrectionLevel }).modules.size;
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

// --- SVG helpers -----------------------------------------------------------------------------------------

/**
 * Minimal well-formedness check (no XML parser is installed): after an optional XML declaration the document
 * must be nothing but tags with double-quoted, unique attributes, properly nested under one root element.
 * The qrcode SVG has no text nodes, comments or entities, so anything else is a failure.
 */
function assertWellFormed(svg: string): void {
  const body = svg.replace(/^<\?xml version="1\.0" encoding="UTF-8"\?>\s*/, '').trimEnd();
  const tag = /<(\/?)([A-Za-z][\w:.-]*)((?:\s+[A-Za-z_:][\w:.-]*="[^"<&]*")*)\s*(\/?)>/y;
  const stack: string[] = [];
  let roots = 0;
  let at = 0;
  while (at < body.length) {
    tag.lastIndex = at;
    const match = tag.exec(body);
    if (!match) throw new Error(`not well-formed at offset ${at}: ${body.slice(at, at + 40)}`);
    const [whole, closing, name, attributes, selfClosing] = match as unknown as [string, string, string, string, string];
    const names = [...attributes.matchAll(/([A-Za-z_:][\w:.-]*)=/g)].map((m) => m[1]);
    expect(new Set(names).size, `duplicate attribute in <${name}>`).to.equal(names.length);
    if (stack.length === 0) {
      expect(closing, 'closing tag without an open element').to.equal('');
      roots++;
    }
    if (closing) {
      expect(stack.pop(), `mismatched </${name}>`).to.equal(name);
    } else if (!selfClosing) {
      stack.push(name);
    }
    at += whole.length;
  }
  expect(stack, 'unclosed elements').to.deep.equal([]);
  expect(roots, 'exactly one root element').to.equal(1);
}

function svgRootAttributes(svg: string): Record<string, string> {
  const root = /<svg\b([^>]*)>/.exec(svg);
  expect(root, 'an <svg> root').to.not.equal(null);
  return Object.fromEntries([...root![1]!.matchAll(/([\w:-]+)="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]));
}

/**
 * Reads the SVG back into a module grid without the code under test: the qrcode library draws the dark
 * modules as one stroked path of horizontal runs, each `M x y+0.5` (absolute, row start) or `m dx 0`
 * (relative skip) followed by `h n` (n modules). This parser only accepts those commands, so a change of
 * output shape fails loudly instead of decoding garbage. The grid covers the whole viewBox (quiet zone too).
 */
function svgModuleGrid(svg: string): boolean[][] {
  const viewBox = svgRootAttributes(svg)['viewBox']!.split(' ').map(Number);
  const [minX, minY, side, sideY] = viewBox as [number, number, number, number];
  expect([minX, minY, sideY]).to.deep.equal([0, 0, side]);
  const background = /<path fill="#ffffff" d="M0 0h(\d+)v(\d+)H0z"\/>/.exec(svg);
  expect(background, 'a white background covering the viewBox').to.not.equal(null);
  expect([Number(background![1]), Number(background![2])]).to.deep.equal([side, side]);
  const paths = [...svg.matchAll(/<path stroke="#000000" d="([^"]*)"\/>/g)];
  expect(paths, 'one black module path').to.have.length(1);

  const grid = Array.from({ length: side }, () => Array.from({ length: side }, () => false));
  let x = 0;
  let y = 0;
  for (const [, command, args] of paths[0]![1]!.matchAll(/([A-Za-z])([^A-Za-z]*)/g)) {
    const numbers = args!.trim().split(/[\s,]+/).map(Number);
    if (command === 'M') [x, y] = numbers as [number, number];
    else if (command === 'm') {
      expect(numbers[1]).to.equal(0);
      x += numbers[0]!;
    } else if (command === 'h') {
      const row = y - 0.5;
      expect(Number.isInteger(row) && Number.isInteger(x) && Number.isInteger(numbers[0])).to.equal(true);
      for (let col = x; col < x + numbers[0]!; col++) grid[row]![col] = true;
      x += numbers[0]!;
    } else throw new Error(`unexpected path command ${command}`);
  }
  return grid;
}

/** Paints a module grid into an RGBA raster, `scale` pixels per module, black on white. */
function rasterise(grid: boolean[][], scale: number): Raster {
  const side = grid.length * scale;
  const rgba = new Uint8ClampedArray(side * side * 4).fill(255);
  for (let y = 0; y < side; y++) {
    for (let x = 0; x < side; x++) {
      if (grid[Math.floor(y / scale)]![Math.floor(x / scale)]) rgba.fill(0, (y * side + x) * 4, (y * side + x) * 4 + 3);
    }
  }
  return { width: side, height: side, rgba };
}

describe('QR codes', () => {
  beforeEach(() => clearQrCache());

  describe('PNG', () => {
    for (const text of [SHORT, LONG]) {
      for (const preset of PRESET_NAMES) {
        it(`decodes back to the ${text.length}-character text with the ${preset} preset, at the preset's size`, async () => {
          const image = await renderQr(text, { format: 'png', preset });
          const raster = readPng(image);
          expect([raster.width, raster.height, image.size]).to.deep.equal(Array(3).fill(QR_PRESETS[preset].size));
          const decoded = decode(raster);
          expect(decoded?.data).to.equal(text);
          // The version jsQR read is the one the preset's error-correction level gives.
          expect(decoded?.version).to.equal(QRCode.create(text, { errorCorrectionLevel: QR_PRESETS[preset].errorCorrectionLevel }).version);
        });
      }
    }

    for (const size of [QR_SIZE_MIN, 100, 333, QR_SIZE_MAX]) {
      it(`decodes back to the short URL at exactly ${size} pixels`, async () => {
        const raster = readPng(await renderQr(SHORT, { format: 'png', size }));
        expect([raster.width, raster.height]).to.deep.equal([size, size]);
        expect(decode(raster)?.data).to.equal(SHORT);
      });
    }

    it('decodes back to the long text at 2048 pixels', async () => {
      expect(LONG).to.have.length(300);
      const raster = readPng(await renderQr(LONG, { format: 'png', size: QR_SIZE_MAX }));
      expect(raster.width).to.equal(QR_SIZE_MAX);
      expect(decode(raster)?.data).to.equal(LONG);
    });

    it('draws at one pixel per module, and says so, when the requested size has fewer pixels than the symbol has modules', async () => {
      // 300 characters at level M are a 69-module symbol; with the 4-module quiet zone that is 77 > 64 pixels.
      const grid = moduleCount(LONG, 'M') + 2 * 4;
      expect(grid).to.be.greaterThan(QR_SIZE_MIN);
      const image = await renderQr(LONG, { format: 'png', size: QR_SIZE_MIN });
      const raster = readPng(image);
      expect([raster.width, image.size]).to.deep.equal([grid, grid]);
      expect(decode(raster)?.data).to.equal(LONG);
    });

    it('defaults to the medium preset: 256 pixels, level M', async () => {
      const raster = readPng(await renderQr(SHORT, { format: 'png' }));
      expect(raster.width).to.equal(256);
      expect(decode(raster)?.version).to.equal(QRCode.create(SHORT, { errorCorrectionLevel: 'M' }).version);
    });

    it('is pure black modules on white, with the module matrix of the qrcode library, whole pixels per module, centred', async () => {
      for (const [text, options] of [
        [SHORT, { format: 'png', size: 256 }],
        [SHORT, { format: 'png', size: 100, margin: 0 }],
        [SHORT, { format: 'png', size: 2048, margin: 16 }],
        [LONG, { format: 'png', preset: 'print' }],
      ] as const) {
        const preset = QR_PRESETS['preset' in options ? options.preset : 'medium'];
        const margin = 'margin' in options ? options.margin : preset.margin;
        const { modules } = QRCode.create(text, { errorCorrectionLevel: preset.errorCorrectionLevel });
        const raster = readPng(await renderQr(text, options));
        const size = raster.width;
        const scale = Math.floor(size / (modules.size + 2 * margin));
        const origin = Math.floor((size - (modules.size + 2 * margin) * scale) / 2) + margin * scale;

        const { rgba } = raster;
        for (let i = 0; i < rgba.length; i += 4) {
          const grey = rgba[i];
          if ((grey !== 0 && grey !== 255) || rgba[i + 1] !== grey || rgba[i + 2] !== grey || rgba[i + 3] !== 255) {
            expect.fail(`pixel ${i / 4} is ${Array.from(rgba.subarray(i, i + 4)).join(',')}, not #000000 or #ffffff`);
          }
        }

        // Every pixel outside the symbol is quiet zone (white); every pixel of a module has the module's colour.
        for (let y = 0; y < size; y++) {
          for (let x = 0; x < size; x++) {
            const row = Math.floor((y - origin) / scale);
            const col = Math.floor((x - origin) / scale);
            const inside = y >= origin && x >= origin && row < modules.size && col < modules.size;
            const expected = inside && modules.get(row, col) === 1;
            if (isDark(raster, x, y) !== expected) expect.fail(`pixel ${x},${y} of ${JSON.stringify(options)}: expected ${expected ? 'dark' : 'light'}`);
          }
        }
      }
    });
  });

  describe('SVG', () => {
    for (const [label, options, size] of [
      ['default', {}, 256],
      ['size 64', { size: QR_SIZE_MIN }, QR_SIZE_MIN],
      ['size 2048', { size: QR_SIZE_MAX }, QR_SIZE_MAX],
      ...PRESET_NAMES.map((preset) => [`${preset} preset`, { preset }, QR_PRESETS[preset].size] as const),
    ] as const) {
      it(`is a well-formed standalone document sized ${size} (${label})`, async () => {
        const image = await renderQr(LONG, { format: 'svg', ...options });
        expect(image.contentType).to.equal('image/svg+xml');
        expect(image.size).to.equal(size);
        const svg = image.body.toString('utf8');
        assertWellFormed(svg);
        const root = svgRootAttributes(svg);
        expect(root).to.include({ xmlns: 'http://www.w3.org/2000/svg', width: String(size), height: String(size) });
        // No scripts, no links, no external resources of any kind: the namespace is the only URL in it.
        expect(svg).to.not.match(/<script/i);
        expect(svg).to.not.match(/href/i);
        expect(svg).to.not.match(/url\(|<image|<use|<foreignObject|@import/i);
        expect(svg.match(/https?:/g)).to.deep.equal(['http:']);
        // The encoded text is never embedded as markup.
        expect(svg).to.not.contain('lnk.example.com');
      });
    }

    // The SVG is proved by an independent route: its path is parsed and painted here (svgModuleGrid,
    // rasterise), not by the code under test, and jsQR must read the text back from those pixels. As a
    // second, exact check the grid must equal the library's own module matrix inside the quiet zone.
    for (const [text, options] of [
      [SHORT, {}],
      [SHORT, { preset: 'small' }],
      [SHORT, { preset: 'print', margin: 0 }],
      [LONG, { preset: 'large' }],
      [LONG, { preset: 'print' }],
    ] as const) {
      it(`decodes back to the ${text.length}-character text (${JSON.stringify(options)})`, async () => {
        const preset = QR_PRESETS['preset' in options ? options.preset : 'medium'];
        const margin = 'margin' in options ? options.margin : preset.margin;
        const svg = (await renderQr(text, { format: 'svg', ...options })).body.toString('utf8');
        const grid = svgModuleGrid(svg);
        const { modules } = QRCode.create(text, { errorCorrectionLevel: preset.errorCorrectionLevel });
        expect(grid).to.have.length(modules.size + 2 * margin);
        for (let row = 0; row < grid.length; row++) {
          for (let col = 0; col < grid.length; col++) {
            const r = row - margin;
            const c = col - margin;
            const expected = r >= 0 && c >= 0 && r < modules.size && c < modules.size && modules.get(r, c) === 1;
            if (grid[row]![col] !== expected) expect.fail(`module ${row},${col}: expected ${expected ? 'dark' : 'light'}`);
          }
        }
        expect(decode(rasterise(grid, 4))?.data).to.equal(text);
      });
    }
  });

  describe('presets and overrides', () => {
    it('gives each preset its size, margin and error-correction level', () => {
      expect(QR_PRESETS).to.deep.equal({
        small: { size: 128, margin: 2, errorCorrectionLevel: 'M' },
        medium: { size: 256, margin: 4, errorCorrectionLevel: 'M' },
        large: { size: 512, margin: 4, errorCorrectionLevel: 'Q' },
        print: { size: 1024, margin: 4, errorCorrectionLevel: 'H' },
      });
      expect(Object.isFrozen(QR_PRESETS) && Object.isFrozen(QR_PRESETS.print)).to.equal(true);
    });

    it('encodes the print preset at level H: more modules than the default level M', async () => {
      for (const text of [SHORT, LONG]) {
        const h = moduleCount(text, 'H');
        expect(h).to.be.greaterThan(moduleCount(text, 'M'));
        const print = svgRootAttributes((await renderQr(text, { format: 'svg', preset: 'print' })).body.toString());
        const medium = svgRootAttributes((await renderQr(text, { format: 'svg', preset: 'medium' })).body.toString());
        expect(print['viewBox']).to.equal(`0 0 ${h + 8} ${h + 8}`);
        expect(medium['viewBox']).to.equal(`0 0 ${moduleCount(text, 'M') + 8} ${moduleCount(text, 'M') + 8}`);
      }
    });

    it('encodes the large preset at level Q', async () => {
      const q = moduleCount(LONG, 'Q');
      expect(q).to.not.equal(moduleCount(LONG, 'M'));
      expect(q).to.not.equal(moduleCount(LONG, 'H'));
      const large = svgRootAttributes((await renderQr(LONG, { format: 'svg', preset: 'large' })).body.toString());
      expect(large['viewBox']).to.equal(`0 0 ${q + 8} ${q + 8}`);
    });

    it('lets an explicit size override the preset size but keep its level and margin', async () => {
      const image = await renderQr(SHORT, { format: 'png', preset: 'print', size: 300 });
      const raster = readPng(image);
      expect([raster.width, image.size]).to.deep.equal([300, 300]);
      expect(decode(raster)?.version).to.equal(QRCode.create(SHORT, { errorCorrectionLevel: 'H' }).version);
      const svg = svgRootAttributes((await renderQr(SHORT, { format: 'svg', preset: 'print', size: 300 })).body.toString());
      expect(svg).to.include({ width: '300', height: '300', viewBox: `0 0 ${moduleCount(SHORT, 'H') + 8} ${moduleCount(SHORT, 'H') + 8}` });
    });

    it('uses the medium margin and level when only a size is given', async () => {
      const svg = svgRootAttributes((await renderQr(SHORT, { format: 'svg', size: 128 })).body.toString());
      expect(svg).to.include({ width: '128', viewBox: `0 0 ${moduleCount(SHORT, 'M') + 8} ${moduleCount(SHORT, 'M') + 8}` });
    });

    it('lets an explicit margin override the preset margin', async () => {
      const count = moduleCount(SHORT, 'M');
      for (const [options, margin] of [
        [{ preset: 'small' }, 2],
        [{ preset: 'small', margin: 0 }, 0],
        [{ preset: 'medium', margin: 16 }, 16],
      ] as const) {
        const svg = svgRootAttributes((await renderQr(SHORT, { format: 'svg', ...options })).body.toString());
        expect(svg['viewBox']).to.equal(`0 0 ${count + 2 * margin} ${count + 2 * margin}`);
      }
      // In the PNG the quiet zone shows as the distance to the first dark pixel (the finder pattern's corner).
      const firstDark = async (options: Partial<QrOptions>): Promise<number> => {
        const raster = readPng(await renderQr(SHORT, { format: 'png', size: 256, ...options }));
        for (let i = 0; i < raster.width; i++) if (isDark(raster, i, i)) return i;
        throw new Error('no dark pixel on the diagonal');
      };
      // At 256 px, half of the pixels left over by whole-pixel modules are added to the quiet zone on each side:
      // margin 0 -> 29 modules at 8 px, 24 px over; 4 -> 37 at 6 px, 34 over; 16 -> 61 at 4 px, 12 over.
      expect(await firstDark({ margin: 0 })).to.equal(12);
      expect(await firstDark({ margin: 4 })).to.equal(17 + 4 * 6);
      expect(await firstDark({ margin: 16 })).to.equal(6 + 16 * 4);
    });
  });

  describe('determinism, ETag and cache', () => {
    it('renders the same bytes and ETag for the same input, even after the cache is emptied', async () => {
      for (const format of ['png', 'svg'] as const) {
        const first = await renderQr(LONG, { format, preset: 'print' });
        clearQrCache();
        const second = await renderQr(LONG, { format, preset: 'print' });
        expect(second).to.not.equal(first);
        expect(second.body.equals(first.body)).to.equal(true);
        expect(second.etag).to.equal(first.etag);
      }
    });

    it('makes the ETag a strong validator from the SHA-256 of the body', async () => {
      for (const format of ['png', 'svg'] as const) {
        const image = await renderQr(SHORT, { format });
        expect(image.etag).to.match(/^"[A-Za-z0-9_-]{27}"$/);
        expect(image.etag).to.equal(`"${createHash('sha256').update(image.body).digest('base64url').slice(0, 27)}"`);
      }
    });

    it('changes the ETag with the size, the format, the preset and the text', async () => {
      const etags = await Promise.all(
        [
          [SHORT, { format: 'png', size: 256 }],
          [SHORT, { format: 'png', size: 257 }],
          [SHORT, { format: 'svg', size: 256 }],
          [SHORT, { format: 'svg', size: 257 }],
          [SHORT, { format: 'png', preset: 'large', size: 256 }],
          [SHORT, { format: 'png', size: 256, margin: 3 }],
          [`${SHORT}4`, { format: 'png', size: 256 }],
        ].map(async ([text, options]) => (await renderQr(text as string, options as QrOptions)).etag),
      );
      expect(new Set(etags).size).to.equal(etags.length);
    });

    it('treats a preset and the same explicit values as one image', async () => {
      const preset = await renderQr(SHORT, { format: 'png', preset: 'medium' });
      const explicit = await renderQr(SHORT, { format: 'png', size: 256, margin: 4 });
      expect(explicit).to.equal(preset);
    });

    it('serves repeats from the cache and evicts the least recently used entry beyond 500', async () => {
      const options: QrOptions = { format: 'svg', size: QR_SIZE_MIN };
      const hot = await renderQr('hot', options);
      const cold = await renderQr('cold', options);
      expect(await renderQr('hot', options)).to.equal(hot);
      for (let i = 0; i < 498; i++) {
        await renderQr(`filler-${i}`, options);
        if (i % 100 === 0) expect(await renderQr('hot', options)).to.equal(hot);
      }
      // 500 entries now; 'hot' came first but was used since, so 'cold' is the least recently used. One more
      // evicts 'cold' (a first-in-first-out cache would evict 'hot' instead).
      await renderQr('one-more', options);
      expect(await renderQr('hot', options)).to.equal(hot);
      const again = await renderQr('cold', options);
      expect(again).to.not.equal(cold);
      expect(again.body.equals(cold.body)).to.equal(true);
    });

    it('does not cache a failed render', async () => {
      const tooLong = 'x'.repeat(3000); // beyond a version 40 code at level M
      const first = await rejection(renderQr(tooLong, { format: 'png' }));
      const second = await rejection(renderQr(tooLong, { format: 'png' }));
      expect(first).to.be.instanceOf(Error);
      expect(second).to.be.instanceOf(Error);
      expect(second).to.not.equal(first);
    });
  });

  describe('guards', () => {
    for (const options of [
      { size: 63 },
      { size: 2049 },
      { size: 0 },
      { size: -256 },
      { size: 100.5 },
      { size: Number.NaN },
      { size: Number.POSITIVE_INFINITY },
      { preset: 'print', size: 4096 },
      { margin: -1 },
      { margin: 17 },
      { margin: 1.5 },
      { preset: 'small', margin: 100 },
      { preset: 'huge' },
      { format: 'gif' },
      { errorCorrectionLevel: 'X' },
      { color: 'red' },
      { background: '#fff' },
      { color: '#aaaaaa' },
      { color: '#ffffff', background: '#000000' },
    ] as unknown as Partial<QrOptions>[]) {
      it(`throws a RangeError for ${JSON.stringify(options, (_, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? String(v) : v))}`, async () => {
        const error = await rejection(renderQr(SHORT, { format: 'png', ...options }));
        expect(error).to.be.instanceOf(RangeError);
      });
    }

    it('accepts the bounds themselves', async () => {
      for (const options of [{ size: QR_SIZE_MIN, margin: 0 }, { size: QR_SIZE_MAX, margin: 16 }]) {
        expect((await renderQr(SHORT, { format: 'png', ...options })).size).to.equal(options.size);
      }
    });
  });

  describe('colours', () => {
    it('computes WCAG contrast ratios', () => {
      expect(contrastRatio('#000000', '#ffffff')).to.be.closeTo(21, 1e-9);
      expect(contrastRatio('#ffffff', '#000000')).to.be.closeTo(21, 1e-9);
      expect(contrastRatio('#777777', '#ffffff')).to.be.closeTo(4.48, 0.01);
      expect(contrastRatio('#123456', '#123456')).to.equal(1);
    });

    it('refuses inverted pairs and pairs under 3:1, accepts the rest', () => {
      expect(qrColourProblem('#000000', '#ffffff')).to.equal(null);
      expect(qrColourProblem('#949494', '#ffffff')).to.equal(null); // 3.03:1
      expect(qrColourProblem('#969696', '#ffffff')).to.match(/2\.9\d:1/);
      expect(qrColourProblem('#ffffff', '#000000')).to.contain('darker');
      expect(qrColourProblem('#808080', '#808080')).to.contain('darker');
      // 3.2:1, yet only 30 of 255 apart as a scanner sees it.
      expect(qrColourProblem('#332f36', '#d117f8')).to.match(/12 % apart in brightness/);
    });

    it('decodes every accepted pair among 200 random ones, dark on light only', async () => {
      let seed = 20261202;
      const random = (): number => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
      const hex = (): string => `#${Array.from({ length: 3 }, () => Math.floor(random() * 256).toString(16).padStart(2, '0')).join('')}`;
      let accepted = 0;
      while (accepted < 200) {
        const [color, background] = [hex(), hex()];
        if (qrColourProblem(color, background) !== null) continue;
        accepted++;
        expect(contrastRatio(color, background)).to.be.at.least(QR_MIN_CONTRAST);
        const png = readPng(await renderQr(SHORT, { format: 'png', color, background }));
        expect(jsQR(png.rgba, png.width, png.height, { inversionAttempts: 'dontInvert' })?.data, `${color} on ${background}`).to.equal(SHORT);
      }
    });
  });

  describe('logo', () => {
    const noise = (side: number): Buffer => {
      const png = new PNG({ width: side, height: side });
      let seed = 99;
      for (let i = 0; i < side * side; i++) {
        seed = (seed * 1103515245 + 12345) & 0x7fffffff;
        const v = seed & 0x10000 ? 0 : 255;
        png.data.fill(v, i * 4, i * 4 + 3);
        png.data[i * 4 + 3] = 255;
      }
      return PNG.sync.write(png);
    };
    const solid = (rgb: [number, number, number]): Buffer => {
      const png = new PNG({ width: 32, height: 32 });
      for (let i = 0; i < 32 * 32; i++) png.data.set([...rgb, 255], i * 4);
      return PNG.sync.write(png);
    };
    const logoOf = (data: Buffer, sha256: string, loads: { count: number } = { count: 0 }) => ({
      sha256,
      contentType: 'image/png' as const,
      load: () => {
        loads.count++;
        return Promise.resolve(data);
      },
    });

    it('centres an odd pad of at most 10 % of the symbol', () => {
      for (let version = 1; version <= 40; version++) {
        const count = 17 + 4 * version;
        const { start, side } = logoPad(count);
        expect(side % 2).to.equal(1);
        expect(start * 2 + side).to.equal(count);
        expect((side * side) / (count * count)).to.be.at.most(QR_LOGO_SHARE);
      }
    });

    it('decodes with a noise logo (the worst case) at every version from 1 to 23, at Q and H', async function () {
      this.timeout(60_000);
      const logo = logoOf(noise(64), 'noise');
      const versions = new Set<string>();
      for (let length = 5; length <= 420; length += 15) {
        const text = `https://lnk.example.com/${'aB3'.repeat(140).slice(0, length)}`;
        for (const errorCorrectionLevel of ['Q', 'H'] as const) {
          versions.add(`${errorCorrectionLevel}${QRCode.create(text, { errorCorrectionLevel }).version}`);
          const png = readPng(await renderQr(text, { format: 'png', size: 800, errorCorrectionLevel, logo }));
          expect(decode(png)?.data, `${text.length} characters at ${errorCorrectionLevel}`).to.equal(text);
        }
      }
      expect(versions.size).to.be.above(30);
    });

    it('raises L and M to Q, keeps H', async () => {
      const logo = logoOf(solid([200, 0, 0]), 'red');
      const version = (level: 'L' | 'M' | 'Q' | 'H') => QRCode.create(SHORT, { errorCorrectionLevel: level }).version;
      expect(version('L')).to.be.below(version('Q'));
      for (const [asked, drawn] of [['L', 'Q'], ['M', 'Q'], ['Q', 'Q'], ['H', 'H']] as const) {
        const decoded = decode(readPng(await renderQr(SHORT, { format: 'png', errorCorrectionLevel: asked, logo })));
        expect(decoded?.version, asked).to.equal(version(drawn));
      }
    });

    it('keys the cache by the logo hash: the same logo loads once, a new one is drawn afresh', async () => {
      clearQrCache();
      const loads = { count: 0 };
      const red = await renderQr(SHORT, { format: 'png', size: 300, logo: logoOf(solid([200, 0, 0]), 'red', loads) });
      expect((await renderQr(SHORT, { format: 'png', size: 300, logo: logoOf(solid([200, 0, 0]), 'red', loads) })).etag).to.equal(red.etag);
      expect(loads.count).to.equal(1);
      const green = await renderQr(SHORT, { format: 'png', size: 300, logo: logoOf(solid([0, 120, 0]), 'green', loads) });
      expect(loads.count).to.equal(2);
      expect(green.etag).not.to.equal(red.etag);
      const centre = (png: Raster) => Array.from(png.rgba.subarray((150 * png.width + 150) * 4, (150 * png.width + 150) * 4 + 3));
      expect(centre(readPng(red))).to.deep.equal([200, 0, 0]);
      expect(centre(readPng(green))).to.deep.equal([0, 120, 0]);
    });

    it('does not cache a render whose logo could not be loaded', async () => {
      clearQrCache();
      const failing = { sha256: 'gone', contentType: 'image/png' as const, load: () => Promise.reject(new Error('replaced')) };
      expect(await rejection(renderQr(SHORT, { format: 'svg', logo: failing }))).to.be.instanceOf(Error);
      const svg = (await renderQr(SHORT, { format: 'svg', logo: logoOf(solid([1, 2, 3]), 'gone') })).body.toString('utf8');
      expect(svg).to.contain('<image ').and.to.contain('href="data:image/png;base64,');
      assertWellFormed(svg);
    });
  });
});

