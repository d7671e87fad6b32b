import busboy from 'busboy';

export interface UploadedFile {
  fileName: string;
  bytes: Uint8Array;
}

export type MultipartUpload =
  | { ok: true; fields: Record<string, string>; files: Record<string, UploadedFile> }
  | { ok: false; why: UploadRefusal };

/**
 * Why an upload was refused: a part over its limits (a file over `maxFileBytes`, too many files,
 * fields or parts), the body as a whole over `maxTotalBytes`, or a body that is not a form.
 */
export type UploadRefusal = 'part_too_large' | 'body_too_large' | 'unreadable';

/**
 * Parses a multipart form as it streams in (busboy), keeping at most `maxFileBytes` of each file:
 * the moment a file, the number of files, or the whole body passes its limit, reading stops and
 * the upload is refused. A 300 MB "picture" costs the process at most one file's limit of memory,
 * never the whole body.
 */
export async function readMultipartUpload(
  request: Request,
  limits: { maxFileBytes: number; maxFiles: number; maxTotalBytes: number },
): Promise<MultipartUpload> {
  const declared = Number(request.headers.get('content-length') ?? 0);
  if (declared > limits.maxTotalBytes) return { ok: false, why: 'body_too_large' };
  const contentType = request.headers.get('content-type') ?? '';
  if (!request.body || !contentType.toLowerCase().startsWith('multipart/form-data')) {
    return { ok: false, why: 'unreadable' };
  }

  let refused: UploadRefusal | null = null;
  const fields: Record<string, string> = {};
  const files: Record<string, UploadedFile> = {};
  let parser: busboy.Busboy;
  try {
    parser = busboy({
      headers: { 'content-type': contentType },
      limits: {
        fileSize: limits.maxFileBytes,
        files: limits.maxFiles,
        fields: 20,
        fieldSize: 4096,
        parts: 40,
      },
    });
  } catch {
    return { ok: false, why: 'unreadable' };
  }
  const finished = new Promise<void>((resolve) => {
    parser.on('file', (name, stream, info) => {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      // A part cut short (the upload refused, the parser destroyed) ends in an error: nothing to add.
      stream.on('error', () => {
        refused ??= 'unreadable';
      });
      stream.on('limit', () => {
        refused = 'part_too_large';
        chunks.length = 0;
      });
      stream.on('close', () => {
        if (!refused) files[name] = { fileName: info.filename ?? '', bytes: Buffer.concat(chunks) };
      });
    });
    parser.on('field', (name, value) => {
      fields[name] = value;
    });
    for (const event of ['filesLimit', 'fieldsLimit', 'partsLimit'] as const) {
      parser.on(event, () => {
        refused = 'part_too_large';
      });
    }
    parser.on('error', () => {
      refused ??= 'unreadable';
      resolve();
    });
    parser.on('close', () => resolve());
  });

  const reader = request.body.getReader();
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > limits.maxTotalBytes) refused = 'body_too_large';
      if (refused) break;
      if (!parser.write(value)) await new Promise((resolve) => parser.once('drain', resolve));
    }
  } catch {
    refused ??= 'unreadable';
  }
  if (refused) {
    // What the client still sends is never read (the web process's request time-out ends it).
    reader.releaseLock();
    parser.destroy();
    return { ok: false, why: refused };
  }
  parser.end();
  await finished;
  if (refused) return { ok: false, why: refused };
  return { ok: true, fields, files };
}
