import { existsSync, readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Stack frames named by the TypeScript they were built from, mapped when an error is logged. The
 * processes run bundled JavaScript (dist/processes, beside each file its `.map`) without Node's
 * `--enable-source-maps`, which parses every loaded file's map as it loads and keeps it: some
 * 60 MB of a web process's memory, and CPU on every stack captured (`npm run bench:api`). A map
 * is read here the first time a frame in its file is logged, and kept (a handful of files).
 */
const maps = new Map<string, { map: SourceMap; dir: string } | null>();

function mapOf(file: string): { map: SourceMap; dir: string } | null {
  let found = maps.get(file);
  if (found === undefined) {
    try {
      const generated = file.startsWith('file://') ? fileURLToPath(file) : file;
      found = existsSync(`${generated}.map`)
        ? {
            map: new SourceMap(JSON.parse(readFileSync(`${generated}.map`, 'utf8'))),
            dir: path.dirname(generated),
          }
        : null;
    } catch {
      found = null;
    }
    maps.set(file, found);
  }
  return found;
}

/** `at fn (/dir/file.mjs:12:34)` and `at /dir/file.mjs:12:34`: the file, line and column. */
const LOCATION = /((?:file:\/\/)?\/[^():]+\.m?js):(\d+):(\d+)/;

/** A stack's frames (lines starting `at`) with each bundled location replaced by its source's. */
export function sourceMappedFrames(frames: string): string {
  return frames
    .split('\n')
    .map((frame) =>
      frame.replace(LOCATION, (location, file: string, line: string, column: string) => {
        const found = mapOf(file);
        const origin = found?.map.findOrigin(Number(line), Number(column));
        if (!found || !origin || !('fileName' in origin)) return location;
        // The map names its sources from its own folder: named here from the app's.
        const source = path.relative(process.cwd(), path.resolve(found.dir, origin.fileName));
        return `${source}:${origin.lineNumber}:${origin.columnNumber}`;
      }),
    )
    .join('\n');
}
