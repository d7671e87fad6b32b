import fontkit from '@pdf-lib/fontkit';
import { decodePDFRawStream, PDFArray, PDFDict, PDFDocument, PDFName, PDFRawStream } from 'pdf-lib';
import { describe, expect, it } from 'vitest';
import { evidenceFileName, evidencePdfText, renderEvidencePdf } from './evidence-pdf';
import { readPdf } from './pdf-attachment';
import type { EvidenceRecord } from './record-format';

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
      "The signed record is attached to this PDF as evidence-vrf_pub1.json; this page is a rendering of it. To verify it, with the service's published keys:",
      'npm run --silent cli -- evidence verify evidence-vrf_pub1.pdf --jwks https://vouch.test/.well-known/jwks.json',
      'or check the attachment with any JOSE library against https://vouch.test/.well-known/jwks.json (the guide “Verify an evidence record” on https://vouch.test/docs).',
    ]);
    const styled = evidencePdfText(record, 'Acme Corp');
    expect(styled[0]).toMatchObject({ size: 11, color: MUTED });
    expect(styled[1]).toMatchObject({ size: 17, bold: true, gap: 6 });
    expect(styled.find((p) => p.text === 'Steps')).toMatchObject({ size: 12.5, bold: true, gap: 2 });
    expect(styled.find((p) => p.text === 'confirmed_email: ada@acme.test')).toMatchObject({ indent: 12 });
    expect(styled.find((p) => p.text.startsWith('npm run'))).toMatchObject({ indent: 12, gap: 2 });
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
});
