import { createHash } from 'node:crypto';
import type { Metadata } from 'sharp';

/** The largest logo file a team may upload. */
export const LOGO_MAX_BYTES = 200 * 1024;
/** The largest side, in pixels, of a logo as uploaded. */
export const LOGO_MAX_SIDE = 1024;
/** What may be uploaded, by what the bytes are (not the file's name or declared type). */
const ACCEPTED_FORMATS = new Set(['png', 'jpeg', 'webp']);

export interface ReencodedLogo {
  image: Buffer;
  contentType: 'image/png';
  width: number;
  height: number;
  /** SHA-256 of `image`, hex: the logo's address. */
  digest: string;
}

export type LogoRefusal = { refused: string };

/**
 * A team's logo as we serve it: the upload decoded (PNG, JPEG or WebP, as its bytes say; SVG and
 * anything else refused, since an SVG is a document that can carry script), at most 200 KB and
 * 1024 px a side, and encoded again as a PNG from its pixels alone, so nothing of the file but the
 * picture reaches a subject's browser or mail client (no metadata, no trailing payload, no
 * polyglot). Decoding is capped at the size allowed, so a small file claiming a huge canvas is
 * refused before it is expanded.
 */
export async function reencodeLogo(upload: Uint8Array): Promise<ReencodedLogo | LogoRefusal> {
  if (upload.byteLength === 0) return { refused: 'The file is empty.' };
  if (upload.byteLength > LOGO_MAX_BYTES) {
    return {
      refused: `The logo must be at most ${LOGO_MAX_BYTES / 1024} KB; this file is ${Math.ceil(upload.byteLength / 1024)} KB.`,
    };
  }
  // Loaded with the first logo, not with the process: libvips (its 6 MB library mapped in, and its
  // caches) serves only an upload.
  const { default: sharp } = await import('sharp');
  let metadata: Metadata;
  try {
    metadata = await sharp(upload, { limitInputPixels: false }).metadata();
  } catch {
    return { refused: 'The file is not a picture we can read: upload a PNG, JPEG or WebP file.' };
  }
  if (!metadata.format || !ACCEPTED_FORMATS.has(metadata.format)) {
    return {
      refused: `A logo must be a PNG, JPEG or WebP picture${metadata.format ? ` (this file is ${metadata.format.toUpperCase()})` : ''}.`,
    };
  }
  const { width = 0, height = 0 } = metadata;
  if (width > LOGO_MAX_SIDE || height > LOGO_MAX_SIDE) {
    return {
      refused: `The logo must be at most ${LOGO_MAX_SIDE} × ${LOGO_MAX_SIDE} pixels; this one is ${width} × ${height}.`,
    };
  }
  try {
    const { data, info } = await sharp(upload, {
      limitInputPixels: LOGO_MAX_SIDE * LOGO_MAX_SIDE,
      failOn: 'error',
    })
      .rotate() // Applies the EXIF orientation, which the re-encoding drops with the rest of the metadata.
      .png({ compressionLevel: 9 })
      .toBuffer({ resolveWithObject: true });
    return {
      image: data,
      contentType: 'image/png',
      width: info.width,
      height: info.height,
      digest: createHash('sha256').update(data).digest('hex'),
    };
  } catch {
    return { refused: 'The picture is damaged and cannot be read: upload it again, or export it anew.' };
  }
}
