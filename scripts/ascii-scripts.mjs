// Built scripts are ASCII (scripts/build-processes.mjs checks each one it writes).

// biome-ignore lint/suspicious/noControlCharactersInRegex: every character from NUL to DEL is ASCII
const NOT_ASCII = /[^\x00-\x7f]/;

/**
 * Throws when a built script has a character outside ASCII. V8 holds a script's source for as long
 * as the process lives, at two bytes a character when any one of them is not Latin-1: a web
 * process's bundles (7 MB) would take 14. esbuild escapes the letters of strings and templates, but
 * not those of regular expression literals, tagged templates or comments it keeps: such a letter
 * belongs in a string (a pattern built with `new RegExp`) or, in HTML, an entity.
 */
export function assertAscii(name, text) {
  const at = text.search(NOT_ASCII);
  if (at < 0) return;
  const line = text.slice(0, at).split('\n').length;
  const around = text.slice(Math.max(0, at - 60), at + 20).replaceAll('\n', ' ');
  throw new Error(
    `${name}:${line} has the non-ASCII "${text[at]}" (in "${around}"): V8 would hold the whole script ` +
      'at two bytes a character. Write it in a string, or as an HTML entity.',
  );
}
