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

/*
 * Reads the files attached to a PDF (its catalog's /Names /EmbeddedFiles tree, ISO 32000 §7.11.4):
 * how `evidence verify` takes the signed record out of an evidence PDF. pdf-lib writes
 * attachments but has no reader for them.
 */

function lookupDict(dict: PDFDict | undefined, name: string): PDFDict | undefined {
  const value = dict?.lookup(PDFName.of(name));
  return value instanceof PDFDict ? value : undefined;
}

function text(value: unknown): string | null {
  return value instanceof PDFString || value instanceof PDFHexString ? value.decodeText() : null;
}

/** Every attached file of the PDF, by name (the name tree's leaves; kids are followed). */
export async function pdfAttachments(bytes: Uint8Array): Promise<Map<string, Uint8Array>> {
  return (await readPdf(bytes)).attachments;
}

/**
 * What a PDF says of itself besides its pages: its attached files by name, and its title and
 * subject (what a reader's document properties show). `evidence verify` holds them against the
 * record it verifies: a PDF that describes one case must not carry another case's record.
 */
export async function readPdf(
  bytes: Uint8Array,
): Promise<{ attachments: Map<string, Uint8Array>; title: string | null; subject: string | null }> {
  // Stryker disable next-line ObjectLiteral,BooleanLiteral: equivalent; updating the metadata changes only the producer and dates of a copy in memory, which nothing here reads.
  const doc = await PDFDocument.load(bytes, { updateMetadata: false });
  return {
    attachments: attachmentsOf(doc),
    title: doc.getTitle() ?? null,
    subject: doc.getSubject() ?? null,
  };
}

function attachmentsOf(doc: PDFDocument): Map<string, Uint8Array> {
  const files = new Map<string, Uint8Array>();
  const tree = lookupDict(lookupDict(doc.catalog, 'Names'), 'EmbeddedFiles');
  const visit = (node: PDFDict | undefined) => {
    if (!node) return;
    const kids = node.lookup(PDFName.of('Kids'));
    if (kids instanceof PDFArray) {
      for (let i = 0; i < kids.size(); i += 1) visit(kids.lookup(i, PDFDict));
    }
    const names = node.lookup(PDFName.of('Names'));
    if (!(names instanceof PDFArray)) return;
    for (let i = 0; i + 1 < names.size(); i += 2) {
      const name = text(names.lookup(i));
      const spec = names.lookup(i + 1);
      const stream = spec instanceof PDFDict ? lookupDict(spec, 'EF')?.lookup(PDFName.of('F')) : undefined;
      if (name && stream instanceof PDFRawStream) files.set(name, decodePDFRawStream(stream).decode());
    }
  };
  visit(tree);
  return files;
}
