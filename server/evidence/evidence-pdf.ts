import { readFile } from 'node:fs/promises';
import path from 'node:path';
import fontkit from '@pdf-lib/fontkit';
import { PDFDocument, type PDFFont, type PDFPage, rgb } from 'pdf-lib';
import { EVIDENCE_MEDIA_TYPE, type EvidenceRecord, evidencePdfNames } from './record-format';

/*
 * The evidence record for people: a PDF with a readable summary of the case and its steps, the
 * signed record attached inside it (the file a verifier checks), and the command that verifies it.
 * Names print in their own script: each run of text is set in the Noto Sans font that covers it
 * (Latin, Greek and Cyrillic; Arabic, shaped and right to left by fontkit; Japanese kana and kanji;
 * Korean), and only the fonts a record uses are embedded, as subsets. Other scripts (Hebrew, Thai,
 * Devanagari…) print as empty boxes: no font for them is shipped yet.
 */

type Script = 'latin' | 'arabic' | 'japanese' | 'korean';

/** Each script's font file (SIL Open Font License, from the @expo-google-fonts packages). */
const FONT_FILES: Record<Script, string> = {
  latin: '@expo-google-fonts/noto-sans/400Regular/NotoSans_400Regular.ttf',
  arabic: '@expo-google-fonts/noto-sans-arabic/400Regular/NotoSansArabic_400Regular.ttf',
  japanese: '@expo-google-fonts/noto-sans-jp/400Regular/NotoSansJP_400Regular.ttf',
  korean: '@expo-google-fonts/noto-sans-kr/400Regular/NotoSansKR_400Regular.ttf',
};
const BOLD_FILE = '@expo-google-fonts/noto-sans/700Bold/NotoSans_700Bold.ttf';

/**
 * Font files are read once per process (the Japanese and Korean ones are 5–6 MB each), from the
 * working directory's node_modules, which every process of the service runs in: the console's
 * routes are bundled by Next.js, where a module-relative resolve of a computed name is refused.
 */
const fontBytes = new Map<string, Promise<Uint8Array>>();
function readFont(file: string): Promise<Uint8Array> {
  let bytes = fontBytes.get(file);
  if (!bytes) {
    bytes = readFile(path.join(process.cwd(), 'node_modules', file));
    bytes.catch(() => fontBytes.delete(file));
    fontBytes.set(file, bytes);
  }
  return bytes;
}

function scriptOf(codePoint: number): Script | null {
  const within = (from: number, to: number) => codePoint >= from && codePoint <= to;
  if (within(0x0600, 0x06ff) || within(0x0750, 0x077f) || within(0x08a0, 0x08ff)) return 'arabic';
  if (within(0xfb50, 0xfdff) || within(0xfe70, 0xfeff)) return 'arabic';
  if (within(0x1100, 0x11ff) || within(0x3130, 0x318f) || within(0xac00, 0xd7af)) return 'korean';
  if (within(0x3000, 0x30ff) || within(0x31f0, 0x31ff) || within(0x3400, 0x4dbf)) return 'japanese';
  if (within(0x4e00, 0x9fff) || within(0xf900, 0xfaff) || within(0xff00, 0xffef)) return 'japanese';
  // Spaces take the script around them (an Arabic name's words stay one run, laid out together).
  if (codePoint === 0x20) return null;
  return 'latin';
}

interface Run {
  script: Script;
  text: string;
}

/** The text cut where its script changes. */
function runsOf(text: string): Run[] {
  const runs: Run[] = [];
  for (const char of text) {
    const script = scriptOf(char.codePointAt(0) ?? 0x20) ?? runs.at(-1)?.script ?? 'latin';
    const last = runs.at(-1);
    if (last && last.script === script) last.text += char;
    else runs.push({ script, text: char });
  }
  // Spaces after an Arabic run stand between it and what follows, not inside it (where fontkit,
  // laying the run right to left, would put them at its left end).
  return runs.flatMap((run) => {
    const trailing = run.script === 'arabic' ? (/ +$/.exec(run.text)?.[0] ?? '') : '';
    if (!trailing || trailing === run.text) return [run];
    return [
      { script: run.script, text: run.text.slice(0, -trailing.length) },
      { script: 'latin' as const, text: trailing },
    ];
  });
}

const PAGE = { width: 595.28, height: 841.89, margin: 50 };
const INK = rgb(0.1, 0.1, 0.12);
const MUTED = rgb(0.38, 0.38, 0.42);

export interface ParagraphOptions {
  size?: number;
  bold?: boolean;
  color?: typeof INK;
  indent?: number;
  /** Space after it, in points. */
  gap?: number;
  /**
   * A line of a command to copy: never wrapped (a line break would cut the command a reader copies
   * in two), set smaller when it would not fit.
   */
  command?: boolean;
}

export interface Paragraph extends ParagraphOptions {
  text: string;
}

type FontName = Script | 'bold';

/** Which font sets a run: bold applies to Latin only (the other scripts have one weight here). */
function fontOf(script: Script, bold: boolean): FontName {
  return bold && script === 'latin' ? 'bold' : script;
}

/**
 * The fonts a document's text needs, each embedded once with only the glyphs used. Latin, Japanese
 * and Korean are cut down by HarfBuzz (subset-font) and embedded as they come out: pdf-lib's own
 * subsetting (fontkit's) drops the outlines of many of these fonts' glyphs. The Arabic font goes
 * through pdf-lib's subsetting, which keeps it whole and shaped, where HarfBuzz's cut loses the
 * joining forms fontkit shapes with.
 */
async function embedFonts(doc: PDFDocument, paragraphs: Paragraph[]): Promise<Map<FontName, PDFFont>> {
  const used = new Map<FontName, Set<string>>();
  for (const paragraph of paragraphs) {
    for (const run of runsOf(paragraph.text)) {
      const name = fontOf(run.script, paragraph.bold ?? false);
      const chars = used.get(name) ?? new Set<string>();
      for (const char of run.text) chars.add(char);
      used.set(name, chars);
    }
  }
  const fonts = new Map<FontName, PDFFont>();
  // Loaded with the first record, not with the process: as it loads, subset-font instantiates
  // WOFF2's two coders, each with 16 MB of WebAssembly memory, which only a record's PDF uses.
  const { default: subsetFont } = await import('subset-font');
  for (const [name, chars] of used) {
    const full = Buffer.from(await readFont(name === 'bold' ? BOLD_FILE : FONT_FILES[name]));
    fonts.set(
      name,
      name === 'arabic'
        ? await doc.embedFont(full, { subset: true })
        : await doc.embedFont(
            await subsetFont(full, [...chars, ' '].join(''), { targetFormat: 'truetype' }),
            {
              // Ligatures (fi, fl) come out of the cut with advances fontkit misreads: letters are set one by one.
              features: { liga: false },
            },
          ),
    );
  }
  return fonts;
}

/** Lays paragraphs out top to bottom, wrapped to the page, starting a page when one is full. */
class Layout {
  private page: PDFPage;
  private y = PAGE.height - PAGE.margin;

  constructor(
    private readonly doc: PDFDocument,
    private readonly fonts: Map<FontName, PDFFont>,
  ) {
    this.page = doc.addPage([PAGE.width, PAGE.height]);
  }

  private font(name: FontName): PDFFont {
    const font = this.fonts.get(name);
    if (!font) throw new Error(`no ${name} font embedded`);
    return font;
  }

  private width(text: string, size: number, bold: boolean): number {
    return runsOf(text).reduce(
      (total, run) => total + this.font(fontOf(run.script, bold)).widthOfTextAtSize(run.text, size),
      0,
    );
  }

  /** `text` cut into lines no wider than `maxWidth` (at spaces; a longer word is cut anywhere). */
  private wrap(text: string, size: number, bold: boolean, maxWidth: number): string[] {
    const lines: string[] = [];
    let line = '';
    for (const word of text.split(' ')) {
      const candidate = line ? `${line} ${word}` : word;
      if (this.width(candidate, size, bold) <= maxWidth) {
        line = candidate;
        continue;
      }
      if (line) lines.push(line);
      let rest = word;
      while (this.width(rest, size, bold) > maxWidth) {
        let cut = rest.length - 1;
        while (cut > 1 && this.width(rest.slice(0, cut), size, bold) > maxWidth) cut -= 1;
        lines.push(rest.slice(0, cut));
        rest = rest.slice(cut);
      }
      line = rest;
    }
    if (line) lines.push(line);
    return lines;
  }

  draw(paragraph: Paragraph): void {
    const bold = paragraph.bold ?? false;
    const x0 = PAGE.margin + (paragraph.indent ?? 0);
    const maxWidth = PAGE.width - PAGE.margin - x0;
    const wanted = paragraph.size ?? 9.5;
    const size = paragraph.command
      ? Math.min(wanted, (wanted * maxWidth) / this.width(paragraph.text, wanted, bold))
      : wanted;
    const leading = wanted * 1.45;
    const lines = paragraph.command ? [paragraph.text] : this.wrap(paragraph.text, size, bold, maxWidth);
    for (const line of lines) {
      if (this.y - leading < PAGE.margin) {
        this.page = this.doc.addPage([PAGE.width, PAGE.height]);
        this.y = PAGE.height - PAGE.margin;
      }
      this.y -= leading;
      let x = x0;
      // Each run in its own font; fontkit shapes an Arabic run and lays it right to left.
      for (const run of runsOf(line)) {
        const font = this.font(fontOf(run.script, bold));
        this.page.drawText(run.text, { x, y: this.y, size, font, color: paragraph.color ?? INK });
        x += font.widthOfTextAtSize(run.text, size);
      }
    }
    this.y -= paragraph.gap ?? 0;
  }
}

/** The document's text, written first and laid out once the fonts it needs are embedded. */
class Writer {
  readonly paragraphs: Paragraph[] = [];

  text(text: string, options: ParagraphOptions = {}): void {
    this.paragraphs.push({ text, ...options });
  }
}

async function render(doc: PDFDocument, paragraphs: Paragraph[]): Promise<void> {
  const layout = new Layout(doc, await embedFonts(doc, paragraphs));
  for (const paragraph of paragraphs) layout.draw(paragraph);
}

/** A field's value as printed: what the record says, or a dash for nothing. */
function shown(value: string | number | boolean | null): string {
  return value === null || value === '' ? '—' : String(value);
}

export interface EvidencePdfInput {
  record: EvidenceRecord;
  /** The signed record exactly as served (flattened JWS JSON): attached byte for byte. */
  signed: string;
  /** The team's display name, for the title. */
  teamName: string;
}

/** The attachment's file name: what `evidence verify` and a PDF reader's attachment list show. */
export function evidenceFileName(record: EvidenceRecord): string {
  return evidencePdfNames(record).attachment;
}

/** The PDF of a signed evidence record (see the top of this file). */
export async function renderEvidencePdf(input: EvidencePdfInput): Promise<Uint8Array> {
  const { record } = input;
  const doc = await PDFDocument.create();
  doc.registerFontkit(fontkit);
  const issued = new Date(record.issued_at);
  const names = evidencePdfNames(record);
  doc.setTitle(names.title);
  doc.setAuthor(record.issuer);
  doc.setSubject(names.subject);
  doc.setCreator('Vouch');
  doc.setProducer('Vouch (pdf-lib)');
  doc.setCreationDate(issued);
  doc.setModificationDate(issued);
  const attachment = names.attachment;
  await doc.attach(new TextEncoder().encode(input.signed), attachment, {
    mimeType: EVIDENCE_MEDIA_TYPE,
    description: 'The signed evidence record (JWS, flattened JSON serialization)',
    creationDate: issued,
    modificationDate: issued,
  });

  await render(doc, evidencePdfText(record, input.teamName));
  return doc.save();
}

/**
 * What an evidence PDF prints, paragraph by paragraph (text and style), before it is laid out: the
 * team, the case and its outcome, each step with its evidence, the events with their bodies'
 * hashes, the audit entries, and how to verify the signed record attached.
 */
export function evidencePdfText(record: EvidenceRecord, teamName: string): Paragraph[] {
  const { attachment } = evidencePdfNames(record);
  const out = new Writer();
  out.text(teamName, { size: 11, color: MUTED });
  out.text(`Evidence record — case ${record.case.public_id}`, { size: 17, bold: true, gap: 6 });
  if (record.provisional) {
    out.text(
      'PROVISIONAL: the case was still open when this record was issued; its outcome may still change.',
      { bold: true, gap: 6 },
    );
  }
  const c = record.case;
  const fields: Array<[string, string | number | boolean | null]> = [
    ['Outcome', c.failure_reason ? `${c.status} (${c.failure_reason})` : c.status],
    ['Subject', c.subject_email],
    ['Subject’s name', c.subject_name],
    ['External reference', c.external_ref],
    ['Opened by identity provider client', c.identity_provider_client],
    ['Created', c.created_at],
    ['Ended', c.ended_at],
    ['Case id', c.id],
    ['Team id', c.team_id],
    ['Mode', c.livemode ? 'live' : 'test'],
    ['Methods requested', c.methods.join(', ')],
    ['Personal data erased', c.redacted_at],
  ];
  for (const [name, value] of fields) out.text(`${name}: ${shown(value)}`);
  if (c.redacted_at) {
    out.text(
      'Personal values appear as hmac:… — HMAC-SHA-256 of the value under the team’s evidence key, base64url.',
      { color: MUTED },
    );
  }

  out.text('Steps', { size: 12.5, bold: true, gap: 2 });
  for (const step of record.steps) {
    out.text(`${step.method}: ${step.outcome}`, { bold: true });
    out.text(`Decided: ${shown(step.decided_at)} · failed attempts: ${step.attempts}`, { indent: 12 });
    for (const [name, value] of Object.entries(step.evidence)) {
      out.text(`${name}: ${shown(value)}`, { indent: 12 });
    }
  }

  out.text(`Events (${record.events.length})`, { size: 12.5, bold: true, gap: 2 });
  for (const event of record.events) {
    out.text(`${event.created_at} ${event.type} ${event.id}`);
    out.text(`SHA-256 of the body as delivered: ${shown(event.body_sha256)}`, {
      indent: 12,
      color: MUTED,
    });
  }

  const { audit } = record;
  out.text(`Audit entries (${audit.entries.length})`, { size: 12.5, bold: true, gap: 2 });
  out.text(
    `Sealed in the team’s hash chain through place ${shown(audit.sealed_through)}${audit.pending.length > 0 ? `; ${audit.pending.length} written but not sealed yet` : ''}.`,
    { color: MUTED },
  );
  for (const entry of audit.entries) {
    out.text(`#${entry.seq} ${shown(entry.entry.at as string)} ${shown(entry.entry.action as string)}`);
    out.text(`hash ${entry.hash}`, { indent: 12, color: MUTED });
  }
  for (const entry of audit.pending) out.text(`(not sealed yet) ${entry.at} ${entry.action}`);

  out.text('Signature', { size: 12.5, bold: true, gap: 2 });
  out.text(`Issued by ${record.issuer} at ${record.issued_at}, signed (EdDSA) with key ${record.kid}.`);
  out.text(
    `The signed record is attached to this PDF as ${attachment}; this page is a rendering of it. To verify it against the service's published keys, run this command (its two lines are one) in a checkout of Vouch's repository (after npm install), with this PDF in the folder you run it from (or its path in place of its name):`,
  );
  // One command on two lines, the file then the keys: the shell reads the backslash's line break as
  // a space, and neither line is ever wrapped (a reader copying a wrapped line runs half of it).
  out.text(`npm run --silent cli -- evidence verify ${evidencePdfNames(record).pdf} \\`, {
    indent: 12,
    command: true,
  });
  out.text(`  --jwks ${record.issuer}/.well-known/jwks.json`, { indent: 12, gap: 2, command: true });
  out.text(
    `or check the attachment with any JOSE library against ${record.issuer}/.well-known/jwks.json (the guide “Verify an evidence record” on ${record.issuer}/docs).`,
  );
  return out.paragraphs;
}
