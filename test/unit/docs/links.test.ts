// Every relative link of README.md, CHANGELOG.md and docs/**/*.md resolves: the file or folder exists,
// and a #anchor names a heading of that file as GitHub anchors it (or an explicit id / name). External
// links (any scheme, http(s) included) are not fetched. Links are read as GitHub reads them (markdown-it:
// inline and reference links, images, raw HTML href/src), so a link inside code is not a link.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import MarkdownIt from 'markdown-it';
import { uniqueSlugs } from '../../../src/reference/markdown';

const ROOT = path.resolve(__dirname, '..', '..', '..', '..');
const md = new MarkdownIt({ html: true });

type Token = ReturnType<MarkdownIt['parse']>[number];

interface Link {
  readonly href: string;
  readonly line: number;
}

interface Page {
  readonly links: readonly Link[];
  /** Heading anchors and explicit id / name attributes. */
  readonly anchors: ReadonlySet<string>;
}

const attrValues = (html: string, names: string): string[] =>
  [...html.matchAll(new RegExp(`\\b(?:${names})\\s*=\\s*(?:"([^"]*)"|'([^']*)')`, 'gi'))].map((m) => m[1] ?? m[2] ?? '');

/** The text GitHub slugs a heading from: its inline content without the markup. */
function headingText(inline: Token): string {
  return (inline.children ?? [])
    .filter((c) => c.type === 'text' || c.type === 'code_inline')
    .map((c) => c.content)
    .join('');
}

const pages = new Map<string, Page>();

function readPage(file: string): Page {
  const hit = pages.get(file);
  if (hit) return hit;
  const tokens = md.parse(fs.readFileSync(file, 'utf8'), {});
  const links: Link[] = [];
  const headings: string[] = [];
  const explicit: string[] = [];
  tokens.forEach((t, i) => {
    const line = (t.map?.[0] ?? 0) + 1;
    if (t.type === 'heading_open') headings.push(headingText(tokens[i + 1]!));
    if (t.type === 'html_block') {
      for (const href of attrValues(t.content, 'href|src')) links.push({ href, line });
      explicit.push(...attrValues(t.content, 'id|name'));
    }
    if (t.type !== 'inline') return;
    for (const c of t.children ?? []) {
      if (c.type === 'link_open') links.push({ href: c.attrGet('href') ?? '', line });
      else if (c.type === 'image') links.push({ href: c.attrGet('src') ?? '', line });
      else if (c.type === 'html_inline') {
        for (const href of attrValues(c.content, 'href|src')) links.push({ href, line });
        explicit.push(...attrValues(c.content, 'id|name'));
      }
    }
  });
  const page = { links, anchors: new Set([...uniqueSlugs(headings), ...explicit]) };
  pages.set(file, page);
  return page;
}

/** What is wrong with one link of `file`, or undefined when it resolves. */
function problem(file: string, href: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith('//')) return undefined; // external: not fetched
  const hash = href.indexOf('#');
  const target = (hash >= 0 ? href.slice(0, hash) : href).replace(/\?.*$/, '');
  const anchor = hash >= 0 ? href.slice(hash + 1) : undefined;
  let decoded: string;
  try {
    decoded = decodeURIComponent(target);
  } catch {
    return 'not a valid URL';
  }
  const resolved = decoded === '' ? file : decoded.startsWith('/') ? path.join(ROOT, decoded) : path.resolve(path.dirname(file), decoded);
  if (!fs.existsSync(resolved)) return `no such file: ${path.relative(ROOT, resolved)}`;
  if (anchor === undefined || anchor === '' || !resolved.endsWith('.md') || !fs.statSync(resolved).isFile()) return undefined;
  const slug = decodeURIComponent(anchor);
  return readPage(resolved).anchors.has(slug) ? undefined : `no heading with the anchor #${slug} in ${path.relative(ROOT, resolved)}`;
}

function markdownFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? markdownFiles(path.join(dir, e.name)) : e.name.endsWith('.md') ? [path.join(dir, e.name)] : []))
    .sort();
}

const FILES = [path.join(ROOT, 'README.md'), path.join(ROOT, 'CHANGELOG.md'), ...markdownFiles(path.join(ROOT, 'docs'))];

describe('relative links in the documentation', () => {
  it('finds the pages it checks', () => {
    assert.ok(FILES.length >= 3, FILES.join(', '));
    // a sanity check of the reader: README.md links to at least one file of this repository
    assert.ok(readPage(FILES[0]!).links.some((l) => problem(FILES[0]!, l.href) === undefined && !/^[a-z]+:/i.test(l.href)));
  });

  for (const file of FILES) {
    const rel = path.relative(ROOT, file).split(path.sep).join('/');
    it(`${rel}: every relative link and #anchor resolves`, () => {
      const broken = readPage(file)
        .links.map((l) => ({ ...l, why: problem(file, l.href) }))
        .filter((l) => l.why !== undefined)
        .map((l) => `${rel}:${l.line}: (${l.href}) ${l.why}`);
      assert.deepEqual(broken, [], `broken links in ${rel}:\n${broken.join('\n')}`);
    });
  }
});
