import { createHash } from 'node:crypto';
import type { IdentityResult, UploadedImage, UploadIdentityProvider } from './identity-provider';

/**
 * A deterministic stand-in for a document-checking service, for development and tests. It checks
 * that both uploads are images, then decides from documented test inputs:
 *
 * - document rejected: the file name contains `reject`, or its bytes contain `VOUCH-TEST:REJECT-DOCUMENT`
 * - selfie rejected (face does not match): the selfie's file name contains `mismatch`, or its bytes
 *   contain `VOUCH-TEST:REJECT-SELFIE`
 * - the name on the document: the text after `VOUCH-TEST:NAME=` in the document's bytes, up to `;`
 *   (otherwise the name the case expects, its subject_name or an identity provider's names, and
 *   `Sam Sample` for a case expecting none); its first word is the given name, the rest the
 *   family name
 * - anything else passes.
 *
 * Images are only read in memory and never stored.
 */
export const SIMULATED_DEFAULT_NAME = 'Sam Sample';

const MAGIC: Array<{ type: string; bytes: number[]; offset?: number }> = [
  { type: 'jpeg', bytes: [0xff, 0xd8, 0xff] },
  { type: 'png', bytes: [0x89, 0x50, 0x4e, 0x47] },
  { type: 'webp', bytes: [0x57, 0x45, 0x42, 0x50], offset: 8 },
  { type: 'heic', bytes: [0x66, 0x74, 0x79, 0x70], offset: 4 },
];

export function isImage(bytes: Uint8Array): boolean {
  return MAGIC.some(({ bytes: magic, offset = 0 }) => magic.every((b, i) => bytes[offset + i] === b));
}

function contains(image: UploadedImage, marker: string): boolean {
  return Buffer.from(image.bytes).includes(marker, 0, 'latin1');
}

function nameOn(document: UploadedImage, expectedName: string | null | undefined): string {
  // UTF-8, so a test can put a name in any script on its document (an image's other bytes read as
  // replacement characters, which the marker never contains).
  const text = Buffer.from(document.bytes).toString('utf8');
  const match = /VOUCH-TEST:NAME=([^;\n\0]{1,100});/.exec(text);
  return match?.[1]?.trim() || expectedName?.trim() || SIMULATED_DEFAULT_NAME;
}

/** The check's id: the same two pictures always get the same one, as a report id would name them. */
function checkId(document: UploadedImage, selfie: UploadedImage): string {
  const digest = createHash('sha256').update(document.bytes).update(selfie.bytes).digest('hex');
  return `simchk_${digest.slice(0, 24)}`;
}

export function createSimulatedIdentityProvider(): UploadIdentityProvider {
  return {
    kind: 'upload',
    async check({ document, selfie, expectedName }): Promise<IdentityResult> {
      const reportId = checkId(document, selfie);
      if (!isImage(document.bytes)) {
        return { outcome: 'rejected', part: 'document', detail: 'document_unreadable', reportId };
      }
      if (
        document.fileName.toLowerCase().includes('reject') ||
        contains(document, 'VOUCH-TEST:REJECT-DOCUMENT')
      ) {
        return { outcome: 'rejected', part: 'document', detail: 'document_unverified', reportId };
      }
      if (!isImage(selfie.bytes))
        return { outcome: 'rejected', part: 'face', detail: 'selfie_unreadable', reportId };
      if (
        selfie.fileName.toLowerCase().includes('mismatch') ||
        contains(selfie, 'VOUCH-TEST:REJECT-SELFIE')
      ) {
        return { outcome: 'rejected', part: 'face', detail: 'selfie_face_mismatch', reportId };
      }
      const name = nameOn(document, expectedName);
      const [given = '', ...family] = name.split(' ');
      return {
        outcome: 'verified',
        name,
        names: family.length > 0 ? { given, family: family.join(' ') } : null,
        reportId,
      };
    },
  };
}
