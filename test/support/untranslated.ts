import { type DefaultTreeAdapterMap, parse } from 'parse5';

type Node = DefaultTreeAdapterMap['node'];
type Element = DefaultTreeAdapterMap['element'];

/** Attributes a person reads or hears (an image's text, a control's name). */
const READ_ATTRIBUTES = new Set(['alt', 'title', 'aria-label', 'placeholder']);

function isElement(node: Node): node is Element {
  return 'tagName' in node;
}

/**
 * What a reader of this page reads: its text (title included) and its spoken attributes, without
 * scripts and styles, and without what is marked as written in another language than the page's
 * (the language switch names each language in itself).
 */
export function readableText(html: string): string[] {
  const document = parse(html);
  const root = document.childNodes.find(isElement);
  const pageLanguage = root?.attrs.find((a) => a.name === 'lang')?.value ?? '';
  const pieces: string[] = [];
  const walk = (node: Node) => {
    if (isElement(node)) {
      if (node.tagName === 'script' || node.tagName === 'style') return;
      const lang = node.attrs.find((a) => a.name === 'lang')?.value;
      if (lang !== undefined && lang !== pageLanguage) return;
      for (const attribute of node.attrs)
        if (READ_ATTRIBUTES.has(attribute.name)) pieces.push(attribute.value);
    }
    if ('value' in node && node.nodeName === '#text') pieces.push(node.value);
    if ('childNodes' in node) for (const child of node.childNodes) walk(child);
  };
  walk(document);
  return pieces;
}

/**
 * The runs of plain ASCII letters left in `pieces` once the values that come from data are taken
 * out (names, addresses, URLs, the support line, the product's name): in a page, mail or text
 * rendered in the pseudo-locale, each is a string that bypassed the catalogue.
 */
export function untranslatedRuns(pieces: readonly string[], data: readonly string[]): string[] {
  const values = [...data].sort((a, b) => b.length - a.length);
  const runs: string[] = [];
  for (const piece of pieces) {
    let rest = piece.replace(/https?:\/\/\S+/g, ' ').replace(/[^\s<>()（）]+@[^\s<>()（）]+/g, ' ');
    for (const value of values) rest = rest.split(value).join(' ');
    for (const match of rest.matchAll(/[A-Za-z]+/g)) {
      runs.push(`${match[0]} (in "${piece.trim().slice(0, 80)}")`);
    }
  }
  return runs;
}
