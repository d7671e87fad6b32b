import { describe, expect, it } from 'vitest';
import { AppError } from '@/server/platform/errors';
import { readMultipartUpload } from './multipart-upload';
import { readRequestBody } from './request-body';

/** A body of `chunks` chunks of `size` bytes that counts how many the reader pulled. */
function countingBody(chunks: number, size: number, prefix = '') {
  let pulled = 0;
  const encoder = new TextEncoder();
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (pulled === 0 && prefix) controller.enqueue(encoder.encode(prefix));
      if (pulled >= chunks) return controller.close();
      pulled += 1;
      controller.enqueue(new Uint8Array(size).fill(97));
    },
  });
  return { stream, pulled: () => pulled };
}

function post(body: ReadableStream<Uint8Array>, headers: Record<string, string> = {}): Request {
  return new Request('http://localhost/x', { method: 'POST', body, headers, duplex: 'half' } as RequestInit);
}

describe('readRequestBody', () => {
  it('reads a body within the limit whole', async () => {
    const body = countingBody(3, 100);
    expect((await readRequestBody(post(body.stream), 1000)).byteLength).toBe(300);
  });

  it('stops reading a chunked body the moment it passes the limit', async () => {
    const body = countingBody(10_000, 64 * 1024);
    const read = readRequestBody(post(body.stream), 1_000_000);
    await expect(read).rejects.toBeInstanceOf(AppError);
    await expect(read).rejects.toMatchObject({ appCode: 'PAYLOAD_TOO_LARGE' });
    // 1 MB is 16 chunks of 64 KiB; the stream's own read-ahead adds at most a couple.
    expect(body.pulled()).toBeLessThan(20);
  });

  it('refuses a declared length over the limit without reading anything', async () => {
    const body = countingBody(10, 10);
    await expect(
      readRequestBody(post(body.stream, { 'content-length': '2000' }), 1000),
    ).rejects.toMatchObject({
      appCode: 'PAYLOAD_TOO_LARGE',
    });
    expect(body.pulled()).toBeLessThanOrEqual(1);
  });
});

describe('readMultipartUpload', () => {
  const part = (name: string, filename: string, content: string) =>
    `--b\r\nContent-Disposition: form-data; name="${name}"; filename="${filename}"\r\nContent-Type: image/jpeg\r\n\r\n${content}\r\n`;
  const limits = { maxFileBytes: 1000, maxFiles: 2, maxTotalBytes: 5000 };
  const multipart = { 'content-type': 'multipart/form-data; boundary=b' };

  it('returns the files of a well-formed form', async () => {
    const body = `${part('document', 'id.jpg', 'DOC')}${part('selfie', 'me.jpg', 'SELFIE')}--b--\r\n`;
    const upload = await readMultipartUpload(
      new Request('http://localhost/x', { method: 'POST', body, headers: multipart }),
      limits,
    );
    expect(upload.ok).toBe(true);
    if (!upload.ok) return;
    expect(upload.files.document?.fileName).toBe('id.jpg');
    expect(new TextDecoder().decode(upload.files.selfie?.bytes)).toBe('SELFIE');
  });

  it('stops at a file over its limit, long before the body ends', async () => {
    const body = countingBody(10_000, 100, part('document', 'id.jpg', '').replace(/\r\n$/, ''));
    const upload = await readMultipartUpload(post(body.stream, multipart), limits);
    expect(upload).toEqual({ ok: false, why: 'part_too_large' });
    expect(body.pulled()).toBeLessThan(20);
  });

  it('stops once the whole body passes its limit, though no file did', async () => {
    // A field is cut at 4 KB and the rest of it thrown away: only the body's count stops it.
    const field = '--b\r\nContent-Disposition: form-data; name="note"\r\n\r\n';
    const body = countingBody(100_000, 100, field);
    const upload = await readMultipartUpload(post(body.stream, multipart), limits);
    expect(upload).toEqual({ ok: false, why: 'body_too_large' });
    expect(body.pulled()).toBeGreaterThanOrEqual(50);
    expect(body.pulled()).toBeLessThan(60);
  });

  it('refuses more files than allowed, and what is not multipart', async () => {
    const body = `${part('a', 'a.jpg', '1')}${part('b', 'b.jpg', '2')}${part('c', 'c.jpg', '3')}--b--\r\n`;
    const tooMany = await readMultipartUpload(
      new Request('http://localhost/x', { method: 'POST', body, headers: multipart }),
      limits,
    );
    expect(tooMany).toEqual({ ok: false, why: 'part_too_large' });
    const json = await readMultipartUpload(
      new Request('http://localhost/x', {
        method: 'POST',
        body: '{}',
        headers: { 'content-type': 'application/json' },
      }),
      limits,
    );
    expect(json).toEqual({ ok: false, why: 'unreadable' });
  });
});
