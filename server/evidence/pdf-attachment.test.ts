import { PDFArray, PDFDict, PDFDocument, PDFName, PDFString } from 'pdf-lib';
import { describe, expect, it } from 'vitest';
import { pdfAttachments, readPdf } from './pdf-attachment';

/**
 * Reading a PDF's attached files as ISO 32000 §7.11.4 lays them out: the flat name tree pdf-lib
 * writes, a tree whose leaves sit under Kids (as other writers split a long one), and malformed
 * entries skipped rather than read past the array's end.
 */
async function pdfWith(files: Record<string, string>, metadata = true): Promise<PDFDocument> {
  const doc = await PDFDocument.create();
  doc.addPage();
  if (metadata) {
    doc.setTitle('Evidence record — case pub1');
    doc.setSubject('Signed evidence record of case case-1');
  }
  for (const [name, content] of Object.entries(files)) {
    await doc.attach(new TextEncoder().encode(content), name, { mimeType: 'application/json' });
  }
  // Attachments are embedded as the document is saved: read it back to see its tree.
  return PDFDocument.load(await doc.save());
}

function embeddedFiles(doc: PDFDocument): PDFDict {
  const names = doc.catalog.lookup(PDFName.of('Names'), PDFDict);
  return names.lookup(PDFName.of('EmbeddedFiles'), PDFDict);
}

const decoded = (files: Map<string, Uint8Array>) =>
  Object.fromEntries([...files].map(([name, bytes]) => [name, new TextDecoder().decode(bytes)]));

describe('a PDF’s attachments', () => {
  it('reads every file of a flat name tree, with the title and subject', async () => {
    const doc = await pdfWith({ 'a.json': '{"a":1}', 'b.json': '{"b":2}' });
    const read = await readPdf(await doc.save());
    expect(decoded(read.attachments)).toEqual({ 'a.json': '{"a":1}', 'b.json': '{"b":2}' });
    expect(read.title).toBe('Evidence record — case pub1');
    expect(read.subject).toBe('Signed evidence record of case case-1');
    expect(decoded(await pdfAttachments(await doc.save()))).toEqual(decoded(read.attachments));
  });

  it('follows Kids to the leaves of a split tree', async () => {
    const doc = await pdfWith({ 'a.json': '{"a":1}', 'b.json': '{"b":2}' });
    const tree = embeddedFiles(doc);
    const names = tree.lookup(PDFName.of('Names'), PDFArray);
    const first = doc.context.obj({ Names: [names.get(0), names.get(1)] });
    const second = doc.context.obj({ Names: [names.get(2), names.get(3)] });
    tree.delete(PDFName.of('Names'));
    tree.set(
      PDFName.of('Kids'),
      doc.context.obj([doc.context.register(first), doc.context.register(second)]),
    );
    expect(decoded((await readPdf(await doc.save())).attachments)).toEqual({
      'a.json': '{"a":1}',
      'b.json': '{"b":2}',
    });
  });

  it('skips a name without its file, and anything that is not a name and a file', async () => {
    const doc = await pdfWith({ 'a.json': '{"a":1}' });
    const names = embeddedFiles(doc).lookup(PDFName.of('Names'), PDFArray);
    // A trailing name with nothing after it (an odd-length array), and a pair whose "file" is none.
    names.push(PDFString.of('lonely.json'));
    const read = await readPdf(await doc.save());
    expect(decoded(read.attachments)).toEqual({ 'a.json': '{"a":1}' });
    const odd = await pdfWith({ 'a.json': '{"a":1}' });
    const oddNames = embeddedFiles(odd).lookup(PDFName.of('Names'), PDFArray);
    oddNames.push(PDFString.of('nothing.json'));
    oddNames.push(odd.context.obj({ Type: 'Filespec' }));
    expect(decoded((await readPdf(await odd.save())).attachments)).toEqual({ 'a.json': '{"a":1}' });
  });

  it('answers none, and no title or subject, for a PDF without them', async () => {
    const doc = await pdfWith({}, false);
    expect(await readPdf(await doc.save())).toEqual({ attachments: new Map(), title: null, subject: null });
  });
});
