import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { assertAscii } from './ascii-scripts.mjs';

/** Builds a snippet as scripts/build-processes.mjs builds the processes (the options that matter here). */
async function built(source: string): Promise<string> {
  const result = await build({
    stdin: { contents: source, loader: 'ts' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    minifyWhitespace: true,
    legalComments: 'external',
    outdir: 'out',
    write: false,
    logLevel: 'silent',
  });
  const script = result.outputFiles.find((file) => file.path.endsWith('.js'));
  return script?.text ?? '';
}

describe('built scripts are ASCII', () => {
  it('names the file, line and character of the first non-ASCII one', () => {
    expect(() => assertAscii('chunk.mjs', 'const a = 1;\nconst b = /[łø]/;\n')).toThrow(
      /^chunk\.mjs:2 has the non-ASCII "ł" \(in "const a = 1; const b = \/\[łø\]\/; "\)/,
    );
    expect(() => assertAscii('chunk.mjs', 'const a = "\\u0142";\n')).not.toThrow();
  });

  it("passes what esbuild escapes (strings, templates) and drops (comments, licences' to their file)", async () => {
    const text = await built(
      [
        '/*! a licence, by Jimmy Wärting */',
        'export const folded = { ł: "l", ø: "o" };',
        'export const pattern = new RegExp("[-‐‑–\'’.]", "g");',
        // biome-ignore lint/suspicious/noTemplateCurlyInString: TypeScript's source, with a template
        'export const title = (name: string) => `${name} · Vouch`;',
        'export const shape = {',
        '  // the glyph’s box',
        '  box: 1,',
        '};',
      ].join('\n'),
    );
    expect(() => assertAscii('ok.mjs', text)).not.toThrow();
    expect(text).toContain('\\u0142');
  });

  it('refuses what esbuild leaves as written: a regular expression literal, a tagged template', async () => {
    const literal = await built('export const pattern = /[łø]/g;');
    expect(() => assertAscii('literal.mjs', literal)).toThrow(/non-ASCII "ł"/);
    const tagged = await built('const html = String.raw;\nexport const title = html`Cases · Vouch`;');
    expect(() => assertAscii('tagged.mjs', tagged)).toThrow(/non-ASCII "·"/);
  });
});
