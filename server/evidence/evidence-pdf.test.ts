import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fontkit from '@pdf-lib/fontkit';
import { exportJWK, generateKeyPair } from 'jose';
import {
  decodePDFRawStream,
  PDFArray,
  PDFDict,
  PDFDocument,
  PDFHexString,
  PDFName,
  PDFRawStream,
  PDFString,
} from 'pdf-lib';
import { describe, expect, it, vi } from 'vitest';
import { runCli } from '@/cli/run';
import { chainHash } from '@/server/audit/chain-hash';
import { signFlattened } from '@/server/signing/sign';
import { pdfTextLines } from '@/test/support/pdf-text';
import { evidenceFileName, evidencePdfText, renderEvidencePdf } from './evidence-pdf';
import { readPdf } from './pdf-attachment';
import { EVIDENCE_TYP, type EvidenceRecord } from './record-format';

/**
 * The evidence PDF: what it prints (every line, from the record), what it says of itself (title,
 * subject, author, dates), the signed record attached byte for byte, and names in their scripts,
 * each set in a font embedded with outlines for its glyphs.
 */
const record: EvidenceRecord = {
  type: 'vouch.evidence_record',
  version: 1,
  issuer: 'https://vouch.test',
  issued_at: '2026-11-28T12:00:00.000Z',
  kid: 'kid-1',
  provisional: false,
  case: {
    id: 'case-1',
    public_id: 'vrf_pub1',
    team_id: 'team-1',
    livemode: true,
    status: 'failed',
    failure_reason: 'name_mismatch',
    created_at: '2026-11-28T11:00:00.000Z',
    ended_at: '2026-11-28T11:30:00.000Z',
    redacted_at: null,
    methods: ['email', 'government_id'],
    subject_email: 'ada@acme.test',
    subject_name: 'ليلى الحسن 山田花子 김민준',
    external_ref: '00uADA',
    identity_provider_client: 'vouch_client_x',
  },
  steps: [
    {
      method: 'email',
      outcome: 'verified',
      decided_at: '2026-11-28T11:10:00.000Z',
      attempts: 0,
      evidence: { confirmed_email: 'ada@acme.test' },
    },
    {
      method: 'government_id',
      outcome: 'failed',
      decided_at: null,
      attempts: 1,
      evidence: { vendor_report_id: null },
    },
  ],
  events: [
    { id: 'evt_1', type: 'case.created', created_at: '2026-11-28T11:00:00.000Z', body_sha256: 'ab12' },
  ],
  audit: {
    sealed_through: 4,
    entries: [
      {
        seq: 4,
        prev_hash: null,
        hash: 'cd34',
        entry: { at: '2026-11-28T11:00:01.000Z', action: 'case.created' },
      },
    ],
    pending: [{ id: 'a2', action: 'case.failed', at: '2026-11-28T11:30:00.000Z' }],
  },
};

const MUTED = { red: 0.38, green: 0.38, blue: 0.42 };

describe('the evidence PDF', () => {
  it('prints the case, each step, the events, the audit entries and how to verify, from the record', () => {
    const lines = evidencePdfText(record, 'Acme Corp').map((p) => p.text);
    expect(lines).toEqual([
      'Acme Corp',
      'Evidence record — case vrf_pub1',
      'Outcome: failed (name_mismatch)',
      'Subject: ada@acme.test',
      'Subject’s name: ليلى الحسن 山田花子 김민준',
      'External reference: 00uADA',
      'Opened by identity provider client: vouch_client_x',
      'Created: 2026-11-28T11:00:00.000Z',
      'Ended: 2026-11-28T11:30:00.000Z',
      'Case id: case-1',
      'Team id: team-1',
      'Mode: live',
      'Methods requested: email, government_id',
      'Personal data erased: —',
      'Steps',
      'email: verified',
      'Decided: 2026-11-28T11:10:00.000Z · failed attempts: 0',
      'confirmed_email: ada@acme.test',
      'government_id: failed',
      'Decided: — · failed attempts: 1',
      'vendor_report_id: —',
      'Events (1)',
      '2026-11-28T11:00:00.000Z case.created evt_1',
      'SHA-256 of the body as delivered: ab12',
      'Audit entries (1)',
      'Sealed in the team’s hash chain through place 4; 1 written but not sealed yet.',
      '#4 2026-11-28T11:00:01.000Z case.created',
      'hash cd34',
      '(not sealed yet) 2026-11-28T11:30:00.000Z case.failed',
      'Signature',
      'Issued by https://vouch.test at 2026-11-28T12:00:00.000Z, signed (EdDSA) with key kid-1.',
      "The signed record is attached to this PDF as evidence-vrf_pub1.json; this page is a rendering of it. To verify it against the service's published keys, run this command (its two lines are one) in a checkout of Vouch's repository (after npm install), with this PDF in the folder you run it from (or its path in place of its name):",
      'npm run --silent cli -- evidence verify evidence-vrf_pub1.pdf \\',
      '  --jwks https://vouch.test/.well-known/jwks.json',
      'or check the attachment with any JOSE library against https://vouch.test/.well-known/jwks.json (the guide “Verify an evidence record” on https://vouch.test/docs).',
    ]);
    const styled = evidencePdfText(record, 'Acme Corp');
    expect(styled[0]).toMatchObject({ size: 11, color: MUTED });
    expect(styled[1]).toMatchObject({ size: 17, bold: true, gap: 6 });
    expect(styled.find((p) => p.text === 'Steps')).toMatchObject({ size: 12.5, bold: true, gap: 2 });
    expect(styled.find((p) => p.text === 'confirmed_email: ada@acme.test')).toMatchObject({ indent: 12 });
    expect(styled.find((p) => p.text.startsWith('npm run'))).toMatchObject({ indent: 12, command: true });
    expect(styled.find((p) => p.text.startsWith('  --jwks'))).toMatchObject({
      indent: 12,
      gap: 2,
      command: true,
    });
  });

  it('says so when the case was open, and when its personal data was erased', () => {
    const lines = evidencePdfText(
      {
        ...record,
        provisional: true,
        case: {
          ...record.case,
          livemode: false,
          status: 'open',
          failure_reason: null,
          redacted_at: '2026-12-01T00:00:00.000Z',
        },
        audit: { ...record.audit, pending: [] },
      },
      'Acme Corp',
    ).map((p) => p.text);
    expect(lines[2]).toBe(
      'PROVISIONAL: the case was still open when this record was issued; its outcome may still change.',
    );
    expect(lines).toContain('Outcome: open');
    expect(lines).toContain('Mode: test');
    expect(lines).toContain('Personal data erased: 2026-12-01T00:00:00.000Z');
    expect(lines).toContain(
      'Personal values appear as hmac:… — HMAC-SHA-256 of the value under the team’s evidence key, base64url.',
    );
    expect(lines).toContain('Sealed in the team’s hash chain through place 4.');
    const styled = evidencePdfText(
      { ...record, provisional: true, case: { ...record.case, redacted_at: '2026-12-01T00:00:00.000Z' } },
      'Acme Corp',
    );
    expect(styled.find((p) => p.text.startsWith('PROVISIONAL'))).toMatchObject({ bold: true, gap: 6 });
    expect(styled.find((p) => p.text.startsWith('Personal values appear'))).toMatchObject({ color: MUTED });
  });

  it('prints an empty value as a dash, as it prints none', () => {
    const lines = evidencePdfText({ ...record, case: { ...record.case, external_ref: '' } }, 'Acme Corp').map(
      (p) => p.text,
    );
    expect(lines).toContain('External reference: —');
  });

  it('names the PDF to verify after the attachment, changing only its final .json to .pdf', () => {
    const lines = evidencePdfText(
      { ...record, case: { ...record.case, public_id: 'vrf.json1' } },
      'Acme Corp',
    ).map((p) => p.text);
    expect(lines).toContain('npm run --silent cli -- evidence verify evidence-vrf.json1.pdf \\');
  });

  it('prints a command that verifies the PDF as a reader copies it from the page, run as npm runs it', async () => {
    // A key of the test's own, published where the record's issuer says its keys are.
    const pair = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
    const kid = 'pdf-key-1';
    const jwk = { ...(await exportJWK(pair.publicKey)), kid, alg: 'EdDSA', use: 'sig' };
    const server = createServer((request, response) => {
      response.writeHead(request.url === '/.well-known/jwks.json' ? 200 : 404, {
        'content-type': 'application/json',
      });
      response.end(JSON.stringify({ keys: [jwk] }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const folder = await mkdtemp(path.join(tmpdir(), 'evidence-pdf-'));
    const env = { INIT_CWD: process.env.INIT_CWD, npm_lifecycle_event: process.env.npm_lifecycle_event };
    const written = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    try {
      const entry = {
        at: '2026-11-28T11:00:01.000Z',
        action: 'case.created',
        target: 'case-1',
        team: 'team-1',
      };
      const signedRecord: EvidenceRecord = {
        ...record,
        issuer: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        kid,
        audit: {
          sealed_through: 4,
          entries: [{ seq: 4, prev_hash: null, hash: chainHash(4, null, entry), entry }],
          pending: [],
        },
      };
      const jws = await signFlattened(
        { kid, alg: 'EdDSA', privateKey: pair.privateKey },
        EVIDENCE_TYP,
        signedRecord,
      );
      const bytes = await renderEvidencePdf({
        record: signedRecord,
        signed: JSON.stringify(jws),
        teamName: 'Acme Corp',
      });
      // Saved under the name the console downloads it by.
      await writeFile(path.join(folder, 'evidence-vrf_pub1.pdf'), bytes);

      // The page's text as a reader copies it, line by line: a shell reads a line that ends in a
      // backslash as going on in the next one, and runs each other line as it comes.
      const lines = await pdfTextLines(bytes);
      let command = '';
      for (const line of lines.slice(lines.findIndex((text) => text.startsWith('npm run')))) {
        command += line.endsWith('\\') ? line.slice(0, -1) : line;
        if (!line.endsWith('\\')) break;
      }
      const words = command.trim().split(/\s+/);
      // `npm run --silent cli -- ARGS` runs the CLI's entry with ARGS in the package's folder,
      // saying in INIT_CWD the folder it was run from (here, the one holding the PDF).
      expect(words.slice(0, 5)).toEqual(['npm', 'run', '--silent', 'cli', '--']);
      const manifest = JSON.parse(await readFile('package.json', 'utf8')) as {
        scripts: Record<string, string>;
      };
      expect(manifest.scripts.cli).toBe('node scripts/run-cli.mjs index');
      process.env.INIT_CWD = folder;
      process.env.npm_lifecycle_event = 'cli';
      const answer = JSON.parse(await runCli(words.slice(5)));
      expect(answer).toMatchObject({
        ok: true,
        verified: 'the attached record, not the printed pages',
        case_id: 'case-1',
        kid,
      });
      expect(written.mock.calls.map(([text]) => String(text)).join('')).toContain(
        `The evidence record verifies (keys: ${signedRecord.issuer}/.well-known/jwks.json).`,
      );
    } finally {
      written.mockRestore();
      for (const [name, value] of Object.entries(env)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
      server.close();
      await rm(folder, { recursive: true, force: true });
    }
  });

  it('renders: its own title, subject and dates, the signed record attached as is, names in their scripts’ fonts, more pages as needed', async () => {
    const signed = '{"payload":"x","protected":"y","signature":"z"}';
    const long = {
      ...record,
      events: Array.from({ length: 80 }, (_, i) => ({ ...record.events[0], id: `evt_${i}` })),
    } as EvidenceRecord;
    const bytes = await renderEvidencePdf({ record: long, signed, teamName: 'Acme Corp' });
    const doc = await PDFDocument.load(bytes, { updateMetadata: false });
    expect(doc.getTitle()).toBe('Evidence record — case vrf_pub1');
    expect(doc.getSubject()).toBe('Signed evidence record of case case-1');
    expect(doc.getAuthor()).toBe('https://vouch.test');
    expect(doc.getCreator()).toBe('Vouch');
    expect(doc.getCreationDate()?.toISOString()).toBe('2026-11-28T12:00:00.000Z');
    expect(doc.getModificationDate()?.toISOString()).toBe('2026-11-28T12:00:00.000Z');
    expect(doc.getProducer()).toBe('Vouch (pdf-lib)');
    // The attachment says what it is: its media type, a description and the record's dates.
    const tree = doc.catalog
      .lookup(PDFName.of('Names'), PDFDict)
      .lookup(PDFName.of('EmbeddedFiles'), PDFDict);
    const spec = tree.lookup(PDFName.of('Names'), PDFArray).lookup(1, PDFDict);
    expect(spec.lookup(PDFName.of('Desc'), PDFHexString).decodeText()).toBe(
      'The signed evidence record (JWS, flattened JSON serialization)',
    );
    const stream = spec.lookup(PDFName.of('EF'), PDFDict).lookup(PDFName.of('F'));
    expect(stream).toBeInstanceOf(PDFRawStream);
    const file = (stream as PDFRawStream).dict;
    expect(file.lookup(PDFName.of('Subtype'), PDFName).decodeText()).toBe('application/jose+json');
    const params = file.lookup(PDFName.of('Params'), PDFDict);
    expect(params.lookup(PDFName.of('ModDate'), PDFString).decodeDate().toISOString()).toBe(
      '2026-11-28T12:00:00.000Z',
    );
    expect(doc.getPageCount()).toBeGreaterThan(1);
    const pdf = await readPdf(bytes);
    expect([...pdf.attachments.keys()]).toEqual([evidenceFileName(record)]);
    expect(new TextDecoder().decode(pdf.attachments.get('evidence-vrf_pub1.json'))).toBe(signed);
    const fonts = doc.context.enumerateIndirectObjects().flatMap(([, object]) => {
      if (!(object instanceof PDFDict)) return [];
      const file = object.lookup(PDFName.of('FontFile2'));
      if (!(file instanceof PDFRawStream)) return [];
      const font = fontkit.create(Buffer.from(decodePDFRawStream(file).decode())) as unknown as {
        numGlyphs: number;
        getGlyph: (id: number) => { path: { commands: unknown[] } };
      };
      let outlined = 0;
      for (let id = 1; id < font.numGlyphs; id += 1)
        if (font.getGlyph(id).path.commands.length > 0) outlined += 1;
      return [{ name: String(object.lookup(PDFName.of('FontName'))), outlined, glyphs: font.numGlyphs }];
    });
    const font = (family: string) => fonts.find((f) => f.name.includes(family));
    expect(font('NotoSansArabic')?.outlined).toBeGreaterThanOrEqual(new Set('ليلىالحسن').size);
    expect(font('NotoSansJP')?.outlined).toBeGreaterThanOrEqual(4);
    expect(font('NotoSansKR')?.outlined).toBeGreaterThanOrEqual(3);
    expect(font('NotoSans-Bold')?.outlined).toBeGreaterThan(10);
    // Subsets: far fewer glyphs than the fonts hold (the Japanese one holds some 17,000, the Latin one some 3,700).
    expect(font('NotoSansJP')?.glyphs).toBeLessThan(50);
    expect(font('NotoSans-Regular')?.glyphs).toBeLessThan(400);
  });

  it('lays every line out where it was laid out when this was last reviewed (a snapshot of each page’s drawing)', async () => {
    // The layout is a function of the record and the fonts: the same record draws the same
    // pages. A change of layout shows here as a diff of the drawing operators to review (and
    // `vitest -u` to accept): positions, fonts, sizes, colours, wrapping and page breaks.
    const laidOut = {
      ...record,
      case: { ...record.case, subject_email: `ada.lovelace.${'x'.repeat(120)}@a-very-long-domain.example` },
      events: Array.from({ length: 30 }, (_, i) => ({ ...record.events[0], id: `evt_${i}` })),
    } as EvidenceRecord;
    const bytes = await renderEvidencePdf({ record: laidOut, signed: '{}', teamName: 'Acme Corp' });
    const doc = await PDFDocument.load(bytes, { updateMetadata: false });
    const pages = doc.getPages().map((page) => {
      const contents = page.node.Contents();
      const streams = contents instanceof PDFArray ? contents.asArray() : contents ? [contents] : [];
      return (
        streams
          .map((ref) => doc.context.lookup(ref))
          .map((stream) =>
            stream instanceof PDFRawStream
              ? Buffer.from(decodePDFRawStream(stream).decode()).toString('latin1')
              : '',
          )
          .join('\n')
          // Font resources carry a random suffix per document.
          .replace(/\/([A-Za-z0-9-]+?)-\d+ /g, '/$1 ')
      );
    });
    expect(pages.length).toBe(2);
    expect(pages).toMatchSnapshot();
  });

  it('sets each character in its script’s font, at each range’s first and last code point and just outside it', async () => {
    // code point → the font its line sets it in after the Latin label ('' = the label's own run).
    const probes: Array<[number, string]> = [
      [0xfb4f, ''],
      [0xfb50, 'NotoSansArabic-Regular'],
      [0xfdff, 'NotoSansArabic-Regular'],
      [0xfe00, ''],
      [0xfe6f, ''],
      [0xfe70, 'NotoSansArabic-Regular'],
      [0xfeff, 'NotoSansArabic-Regular'],
      [0x10ff, ''],
      [0x1100, 'NotoSansKR-Regular'],
      [0x11ff, 'NotoSansKR-Regular'],
      [0x1200, ''],
      [0x312f, ''],
      [0x3130, 'NotoSansKR-Regular'],
      [0x318f, 'NotoSansKR-Regular'],
      [0x3190, ''],
      [0x2fff, ''],
      [0x3000, 'NotoSansJP-Regular'],
      [0x30ff, 'NotoSansJP-Regular'],
      [0x3100, ''],
      [0x31ef, ''],
      [0x31f0, 'NotoSansJP-Regular'],
      [0x31ff, 'NotoSansJP-Regular'],
      [0x3200, ''],
      [0x33ff, ''],
      [0x3400, 'NotoSansJP-Regular'],
      [0x4dbf, 'NotoSansJP-Regular'],
      [0x4dc0, ''],
    ];
    const probed = {
      ...record,
      case: { ...record.case, subject_name: 'ليلى الحسن', external_ref: 'ليلى  00uADA' },
      steps: [
        { ...record.steps[0], method: '山田', evidence: {} },
        {
          ...record.steps[0],
          evidence: {
            ...Object.fromEntries(probes.map(([code], i) => [`p${i}`, String.fromCodePoint(code)] as const)),
            // A first word longer than the line: cut, with no empty line before it.
            [`${'y'.repeat(150)}`]: 'v',
          },
        },
      ],
    } as EvidenceRecord;
    // No team name: no line for it.
    const bytes = await renderEvidencePdf({ record: probed, signed: '{}', teamName: '' });
    const doc = await PDFDocument.load(bytes, { updateMetadata: false });
    // Each line drawn, top to bottom, as its runs: the font each is set in and its glyph count.
    const lines: Array<{ y: number; runs: Array<{ font: string; glyphs: number }> }> = [];
    for (const page of doc.getPages()) {
      const contents = page.node.Contents();
      const streams = contents instanceof PDFArray ? contents.asArray() : contents ? [contents] : [];
      const drawing = streams
        .map((ref) => doc.context.lookup(ref))
        .map((stream) =>
          stream instanceof PDFRawStream
            ? Buffer.from(decodePDFRawStream(stream).decode()).toString('latin1')
            : '',
        )
        .join('\n');
      let previous: (typeof lines)[number] | undefined;
      for (const [, font = '', , y = '', hex = ''] of drawing.matchAll(
        /\/([A-Za-z0-9-]+?)-\d+ [\d.]+ Tf[\s\S]*?1 0 0 1 ([\d.-]+) ([\d.-]+) Tm\s*<([0-9A-F]*)> Tj/g,
      )) {
        const run = { font, glyphs: hex.length / 4 };
        if (previous && previous.y === Number(y)) previous.runs.push(run);
        else {
          const line = { y: Number(y), runs: [run] };
          lines.push(line);
          previous = line;
        }
      }
    }
    const texts = evidencePdfText(probed, '').map((p) => p.text);
    // The paragraphs before the last one are one line each; the team's empty name draws none.
    const lineOf = (text: string) => lines[texts.indexOf(text) - 1];
    expect(lines[0]).toEqual({ y: 841.89 - 50 - 17 * 1.45, runs: [{ font: 'NotoSans-Bold', glyphs: 31 }] });

    const fonts = (text: string) => lineOf(text)?.runs.map((run) => run.font);
    probes.forEach(([code, font], i) => {
      const expected = font ? ['NotoSans-Regular', font] : ['NotoSans-Regular'];
      expect([code.toString(16), fonts(`p${i}: ${String.fromCodePoint(code)}`)]).toEqual([
        code.toString(16),
        expected,
      ]);
    });
    // Bold is Latin only: the other scripts keep their one weight.
    expect(fonts('山田: verified')).toEqual(['NotoSansJP-Regular', 'NotoSans-Bold']);
    // An Arabic run is the Arabic letters, its inner spaces kept, its trailing spaces split out.
    expect(fonts('Subject’s name: ليلى الحسن')).toEqual(['NotoSans-Regular', 'NotoSansArabic-Regular']);
    expect(lineOf('External reference: ليلى  00uADA')?.runs).toEqual([
      { font: 'NotoSans-Regular', glyphs: 20 },
      { font: 'NotoSansArabic-Regular', glyphs: expect.any(Number) },
      { font: 'NotoSans-Regular', glyphs: 2 },
      { font: 'NotoSans-Regular', glyphs: 6 },
    ]);
    const long = lines.indexOf(lineOf(`${'y'.repeat(150)}: v`) as (typeof lines)[number]);
    expect(Number(lines[long - 1]?.y) - Number(lines[long]?.y)).toBeCloseTo(9.5 * 1.45);
  });

  it('reads a font again after a read that failed, rather than keeping the failure', async () => {
    // Fonts are read from the working directory's node_modules, once per process: a fresh module,
    // first asked from a directory without them, then from the service's own.
    vi.resetModules();
    const fresh = await import('./evidence-pdf');
    // process.cwd() answered for once, not process.chdir(): worker threads (Stryker's) may not chdir.
    const elsewhere = await mkdtemp(path.join(tmpdir(), 'vouch-fonts-'));
    const cwd = vi.spyOn(process, 'cwd').mockReturnValueOnce(elsewhere);
    try {
      await expect(fresh.renderEvidencePdf({ record, signed: '{}', teamName: 'Acme Corp' })).rejects.toThrow(
        /ENOENT/,
      );
    } finally {
      cwd.mockRestore();
      await rm(elsewhere, { recursive: true });
    }
    const bytes = await fresh.renderEvidencePdf({ record, signed: '{}', teamName: 'Acme Corp' });
    expect((await PDFDocument.load(bytes)).getPageCount()).toBeGreaterThan(0);
  });
});
