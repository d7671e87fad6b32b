import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import fresh from 'fresh';
import { contentType } from 'mime-types';
import Negotiator from 'negotiator';
import { PAGE_SCRIPTS } from '@/server/verification/methods/page-scripts';
import { DOCS_ASSETS, docsAssetBody } from './docs-page';

type Encoding = 'br' | 'gzip' | 'identity';
/** Our order of preference, when the client likes several equally (browsers list gzip first). */
const ENCODINGS: readonly Encoding[] = ['br', 'gzip', 'identity'];
/**
 * Brotli's quality 9 comes within a few percent of its best (11) at a small part of the time:
 * the API reference's renderer (4.4 MB) took 1.4 s for 1.05 MB at 9, 40 s for 0.94 MB at 11.
 */
const BROTLI_QUALITY = 9;
/** An encoding is kept only when it saves at least this share of the bytes. */
const WORTHWHILE_SAVING = 1 / 8;
/**
 * Bodies go out in writes of this size, so that the web process sees a slow client's progress
 * write by write (connection-guard.ts) and holds nothing of the body but the shared copy.
 */
const WRITE_BYTES = 64 * 1024;
/** For names that change whenever their content does (a content hash, a version). */
const IMMUTABLE = 'public, max-age=31536000, immutable';
/** For names that stay (public/): the browser keeps a copy and asks each time, 304 when unchanged. */
const REVALIDATE = 'no-cache';

const compressBrotli = promisify(brotliCompress);
const compressGzip = promisify(gzip);

interface Source {
  load: () => Buffer;
  cacheControl: string;
  type: string;
}

interface Variant {
  body: Buffer;
  etag: string;
}

interface Asset {
  type: string;
  cacheControl: string;
  variants: Partial<Record<Encoding, Variant>> & { identity: Variant };
}

/** Answers a GET or HEAD for one asset. */
export type ServeAsset = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

function filesUnder(root: string): string[] {
  if (!existsSync(root)) return [];
  return readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(root, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'));
}

function typeOf(name: string): string {
  return contentType(path.extname(name)) || 'application/octet-stream';
}

/**
 * Each encoding of an asset, made once per process at its first request (in Node's thread pool,
 * off the event loop) and kept: an answer costs no compression, and every client of an asset
 * shares one copy of its bytes, however long it takes to read them.
 */
async function prepare(source: Source): Promise<Asset> {
  const identity = source.load();
  const hash = createHash('sha256').update(identity).digest('base64url').slice(0, 22);
  const [br, gzipped] = await Promise.all([
    compressBrotli(identity, {
      params: {
        [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY,
        [constants.BROTLI_PARAM_SIZE_HINT]: identity.length,
      },
    }),
    compressGzip(identity, { level: 9 }),
  ]);
  const worthwhile = identity.length * (1 - WORTHWHILE_SAVING);
  return {
    type: source.type,
    cacheControl: source.cacheControl,
    variants: {
      identity: { body: identity, etag: `"${hash}"` },
      ...(br.length <= worthwhile && { br: { body: br, etag: `"${hash}-br"` } }),
      ...(gzipped.length <= worthwhile && { gzip: { body: gzipped, etag: `"${hash}-gz"` } }),
    },
  };
}

/** Writes `body` in WRITE_BYTES pieces as the client takes them, then ends the response. */
function send(res: ServerResponse, body: Buffer): void {
  let offset = 0;
  const more = () => {
    while (offset < body.length) {
      if (res.destroyed) return;
      const piece = body.subarray(offset, offset + WRITE_BYTES);
      offset += piece.length;
      if (!res.write(piece)) return void res.once('drain', more);
    }
    res.end();
  };
  more();
}

/**
 * The files the web process serves itself, before Next.js: the API reference's scripts
 * (/docs/assets/), the methods' page scripts, and in production Next's build output (/_next/static/, content-hashed names)
 * and public/. Each answer is compressed as the client accepts (brotli, else gzip), cacheable
 * (for a year when the name changes with the content; otherwise revalidated by ETag) and
 * answered 304 to a client that has it. Next's development server keeps serving its own, which
 * change as the sources do.
 */
export function staticAssets(options: {
  distDir: string;
  publicDir: string;
  dev: boolean;
}): (pathname: string) => ServeAsset | undefined {
  const sources = new Map<string, Source>();
  for (const [asset, name] of Object.entries(DOCS_ASSETS) as [keyof typeof DOCS_ASSETS, string][]) {
    sources.set(`/docs/assets/${name}`, {
      load: () => Buffer.from(docsAssetBody(asset)),
      cacheControl: IMMUTABLE,
      type: typeOf(name),
    });
  }
  // The methods' page scripts (the passkey's), revalidated like public/'s files.
  for (const script of PAGE_SCRIPTS) {
    sources.set(script.path, { load: script.load, cacheControl: REVALIDATE, type: typeOf(script.path) });
  }
  if (!options.dev) {
    const built = path.join(options.distDir, 'static');
    for (const name of filesUnder(built)) {
      sources.set(`/_next/static/${name}`, {
        load: () => readFileSync(path.join(built, name)),
        cacheControl: IMMUTABLE,
        type: typeOf(name),
      });
    }
    for (const name of filesUnder(options.publicDir)) {
      sources.set(`/${name}`, {
        load: () => readFileSync(path.join(options.publicDir, name)),
        cacheControl: REVALIDATE,
        type: typeOf(name),
      });
    }
  }

  const prepared = new Map<string, Promise<Asset>>();
  const assetAt = (pathname: string, source: Source): Promise<Asset> => {
    let asset = prepared.get(pathname);
    if (!asset) {
      asset = prepare(source);
      // A failure (a file gone from the build) is not kept: the next request tries again.
      asset.catch(() => prepared.delete(pathname));
      prepared.set(pathname, asset);
    }
    return asset;
  };

  /** The asset `pathname` (as sent, before any decoding) names, if it is one served here. */
  return (pathname) => {
    const source = sources.get(pathname);
    if (!source) return undefined;
    return async (req, res) => {
      const asset = await assetAt(pathname, source);
      const offered = ENCODINGS.filter((encoding) => asset.variants[encoding]);
      const [chosen] = new Negotiator(req).encodings(offered, { preferred: ENCODINGS });
      const encoding = (chosen ?? 'identity') as Encoding;
      const variant = asset.variants[encoding] ?? asset.variants.identity;
      res.setHeader('Content-Type', asset.type);
      res.setHeader('Cache-Control', asset.cacheControl);
      res.setHeader('ETag', variant.etag);
      if (offered.length > 1) res.setHeader('Vary', 'Accept-Encoding');
      if (fresh(req.headers, { etag: variant.etag })) {
        res.statusCode = 304;
        res.end();
        return;
      }
      if (encoding !== 'identity') res.setHeader('Content-Encoding', encoding);
      res.setHeader('Content-Length', variant.body.length);
      if (req.method === 'HEAD') res.end();
      else send(res, variant.body);
    };
  };
}
