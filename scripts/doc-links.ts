// The documentation link check behind `npm run lint`: every relative link (and image) in README.md and
// docs/**/*.md must name a file or folder of the repository, and a `#fragment` on a Markdown page must name one of
// its headings (GitHub's anchors, github-slugger) or an explicit `<a id>`/`<a name>`. Links with a scheme
// (https:, mailto:, …) are not followed. Markdown is read by markdown-it, so links inside code are not links.
//
//   node scripts/doc-links.ts         check (exit 1 on any broken link)
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, extname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import GithubSlugger from 'github-slugger';
import MarkdownIt, { type Token } from 'markdown-it';

export interface Link { href: string; line: number }
export interface Problem { file: string; line: number; href: string; reason: string }

const markdown = new MarkdownIt({ html: true });
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Plain text of a heading's inline token, as GitHub slugs it (code spans keep their text, markup goes). */
function plainText(inline: Token): string {
  return (inline.children ?? []).map((t) => (t.type === 'text' || t.type === 'code_inline' ? t.content : '')).join('');
}

/** `id` and `name` attributes of HTML anchors in a piece of HTML. */
function htmlAnchors(html: string): string[] {
  return [...html.matchAll(/<a\s[^>]*\b(?:id|name)\s*=\s*["']([^"']+)["']/gi)].map((m) => m[1]!);
}

/** The anchors a page offers: one per heading, in GitHub's slugs (duplicates numbered), and explicit HTML ones. */
export function anchorsOf(text: string): Set<string> {
  const slugger = new GithubSlugger();
  const anchors = new Set<string>();
  const tokens = markdown.parse(text, {});
  tokens.forEach((token, i) => {
    if (token.type === 'heading_open') anchors.add(slugger.slug(plainText(tokens[i + 1]!)));
    if (token.type === 'html_block') htmlAnchors(token.content).forEach((a) => anchors.add(a));
    if (token.type === 'inline') {
      for (const child of token.children ?? []) if (child.type === 'html_inline') htmlAnchors(child.content).forEach((a) => anchors.add(a));
    }
  });
  return anchors;
}

/** Every link and image target of a page, with the (1-based) line of the block it is in. */
export function linksOf(text: string): Link[] {
  const links: Link[] = [];
  let line = 1;
  for (const token of markdown.parse(text, {})) {
    if (token.map) line = token.map[0] + 1; // a table cell's inline token has no map of its own: its row's holds
    if (token.type !== 'inline') continue;
    for (const child of token.children ?? []) {
      const href = child.type === 'link_open' ? child.attrGet('href') : child.type === 'image' ? child.attrGet('src') : null;
      if (href !== null) links.push({ href: String(href), line });
    }
  }
  return links;
}

/** README.md and every Markdown file under docs/, as paths relative to the root. */
export function documentationFiles(root: string = ROOT): string[] {
  const walk = (dir: string): string[] => readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return walk(path);
    return e.isFile() && e.name.endsWith('.md') ? [path] : [];
  });
  return [...(existsSync(join(root, 'README.md')) ? ['README.md'] : []), ...(existsSync(join(root, 'docs')) ? walk('docs').sort() : [])];
}

/** The broken relative links of the given pages (paths relative to root). */
export function check(root: string = ROOT, files: readonly string[] = documentationFiles(root)): Problem[] {
  const anchorCache = new Map<string, Set<string>>();
  const anchorsOfFile = (path: string): Set<string> => {
    let anchors = anchorCache.get(path);
    if (anchors === undefined) {
      anchors = anchorsOf(readFileSync(path, 'utf8'));
      anchorCache.set(path, anchors);
    }
    return anchors;
  };
  const problems: Problem[] = [];
  for (const file of files) {
    const source = join(root, file);
    for (const { href, line } of linksOf(readFileSync(source, 'utf8'))) {
      const problem = (reason: string): void => void problems.push({ file, line, href, reason });
      if (/^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith('//')) continue; // https:, mailto:, …: not ours to check
      const hash = href.indexOf('#');
      const rawPath = hash === -1 ? href : href.slice(0, hash);
      const fragment = hash === -1 ? null : href.slice(hash + 1);
      let path: string;
      let anchor: string | null;
      try {
        path = decodeURIComponent(rawPath.split('?')[0]!);
        anchor = fragment === null ? null : decodeURIComponent(fragment);
      } catch {
        problem('not a valid URL');
        continue;
      }
      const target = path === '' ? source : path.startsWith('/') ? join(root, path) : resolve(dirname(source), path);
      const inside = relative(root, target);
      if (inside.startsWith(`..${sep}`) || inside === '..') {
        problem('points outside the repository');
        continue;
      }
      if (!existsSync(target)) {
        problem(`no such file: ${inside}`);
        continue;
      }
      if (anchor === null || anchor === '' || !statSync(target).isFile() || extname(target) !== '.md') continue;
      if (!anchorsOfFile(target).has(anchor)) problem(`no heading or anchor "#${anchor}" in ${inside}`);
    }
  }
  return problems;
}

/** Pages under docs/ that the index (docs/README.md) does not link to (a notice: the index is kept by hand). */
export function unindexed(root: string = ROOT, files: readonly string[] = documentationFiles(root)): string[] {
  const index = join(root, 'docs', 'README.md');
  if (!existsSync(index)) return [];
  const linked = new Set(linksOf(readFileSync(index, 'utf8'))
    .filter(({ href }) => !/^[a-z][a-z0-9+.-]*:/i.test(href) && !href.startsWith('#'))
    .map(({ href }) => relative(root, resolve(dirname(index), decodeURI(href.split('#')[0]!)))));
  return files.filter((f) => f.startsWith(`docs${sep}`) && f !== join('docs', 'README.md') && !linked.has(f));
}

function main(): void {
  const files = documentationFiles();
  const problems = check(ROOT, files);
  for (const p of problems) console.log(`${p.file}:${p.line}: ${p.href}: ${p.reason}`);
  for (const f of unindexed(ROOT, files)) console.log(`notice: ${f} is not linked from docs/README.md (add it under "More pages")`);
  console.log(`doc-links: ${files.length} pages, ${problems.length} broken links`);
  if (problems.length > 0) process.exitCode = 1;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
