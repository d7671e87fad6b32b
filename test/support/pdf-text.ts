import { decodePDFRawStream, PDFArray, PDFDict, PDFDocument, PDFName, PDFRawStream } from 'pdf-lib';

/*
 * The text of a PDF as a reader copies it, line by line: what a person holding the evidence PDF
 * pastes into a shell. pdf-lib draws each line of text as glyph codes of a Type 0 font (two bytes a
 * glyph, Identity-H) placed with `Tm`, and writes each font's ToUnicode map, which turns the codes
 * back into text; runs of one line (a name in another script) share its baseline. Enough of a PDF
 * reader for the PDFs this service draws, no more.
 */

/** A font's ToUnicode CMap (its bfchar and bfrange entries) as code → text. */
function toUnicode(cmap: string): Map<number, string> {
  const map = new Map<number, string>();
  const utf16 = (hex: string) => {
    const units = hex.match(/.{4}/g) ?? [];
    return String.fromCharCode(...units.map((unit) => Number.parseInt(unit, 16)));
  };
  for (const block of cmap.matchAll(/beginbfchar([\s\S]*?)endbfchar/g)) {
    for (const [, code, text] of (block[1] ?? '').matchAll(/<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>/g)) {
      map.set(Number.parseInt(code ?? '', 16), utf16(text ?? ''));
    }
  }
  for (const block of cmap.matchAll(/beginbfrange([\s\S]*?)endbfrange/g)) {
    for (const [, from, to, start] of (block[1] ?? '').matchAll(
      /<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>/g,
    )) {
      const first = Number.parseInt(from ?? '', 16);
      const base = Number.parseInt(start ?? '', 16);
      for (let code = first; code <= Number.parseInt(to ?? '', 16); code += 1) {
        map.set(code, String.fromCharCode(base + code - first));
      }
    }
  }
  return map;
}

function streamText(stream: unknown): string {
  if (!(stream instanceof PDFRawStream)) return '';
  return Buffer.from(decodePDFRawStream(stream).decode()).toString('latin1');
}

/** Each page's lines of text, top to bottom, the pages in order. */
export async function pdfTextLines(bytes: Uint8Array): Promise<string[]> {
  const doc = await PDFDocument.load(bytes, { updateMetadata: false });
  const lines: string[] = [];
  for (const page of doc.getPages()) {
    const fonts = new Map<string, Map<number, string>>();
    const fontDict = page.node.Resources()?.lookup(PDFName.of('Font'));
    if (fontDict instanceof PDFDict) {
      for (const [name, ref] of fontDict.entries()) {
        const font = doc.context.lookup(ref);
        if (font instanceof PDFDict)
          fonts.set(name.decodeText(), toUnicode(streamText(font.lookup(PDFName.of('ToUnicode')))));
      }
    }
    const contents = page.node.Contents();
    const streams =
      contents instanceof PDFArray
        ? Array.from({ length: contents.size() }, (_, i) => contents.lookup(i))
        : [contents];
    const content = streams.map(streamText).join('\n');
    // Runs by baseline: y → [x, text].
    const baselines = new Map<number, Array<[number, string]>>();
    let font = new Map<number, string>();
    let x = 0;
    let y = 0;
    const operators =
      /\/([^\s/[\]<>()]+)\s+[-\d.]+\s+Tf|[-\d.]+\s+[-\d.]+\s+[-\d.]+\s+[-\d.]+\s+([-\d.]+)\s+([-\d.]+)\s+Tm|<([0-9A-Fa-f]*)>\s*Tj/g;
    for (const [, fontName, tmX, tmY, hex] of content.matchAll(operators)) {
      if (fontName !== undefined) font = fonts.get(fontName) ?? new Map();
      else if (tmX !== undefined && tmY !== undefined) {
        x = Number(tmX);
        y = Math.round(Number(tmY) * 100) / 100;
      } else if (hex !== undefined) {
        const text = (hex.match(/.{4}/g) ?? [])
          .map((code) => font.get(Number.parseInt(code, 16)) ?? '')
          .join('');
        baselines.set(y, [...(baselines.get(y) ?? []), [x, text]]);
      }
    }
    for (const [, runs] of [...baselines.entries()].sort(([a], [b]) => b - a)) {
      lines.push(
        runs
          .sort(([a], [b]) => a - b)
          .map(([, text]) => text)
          .join(''),
      );
    }
  }
  return lines;
}
