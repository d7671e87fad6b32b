import { describe, expect, it } from 'vitest';
import { CONTROL_CHARACTER, storableBytes, storableJson, storableText } from './storable-text';

const utf8 = (text: string) => Buffer.from(text, 'utf8');
/** Whether `text` survives a round trip through UTF-8 unchanged: no lone surrogate. */
const wellFormed = (text: string) => utf8(text).toString('utf8') === text;

describe('storableText', () => {
  it('replaces NUL and the other control characters, keeps tab, line feed and carriage return', () => {
    expect(storableText('ok\0')).toBe('ok\uFFFD');
    expect(storableText('a\u0001b\u001bc\u007fd')).toBe('a\uFFFDb\uFFFDc\uFFFDd');
    expect(storableText('line one\r\n\tline two\n')).toBe('line one\r\n\tline two\n');
    expect(CONTROL_CHARACTER.test(storableText('\0\u0008\u000b\u000c\u000e\u001f\u007f'))).toBe(false);
  });

  it('keeps every other character, whatever its script or plane', () => {
    const text = 'Zoë Ñúñez 李小龍 😀 \u0080\u00a0 “quoted”';
    expect(storableText(text)).toBe(text);
  });

  it('replaces a lone surrogate, which UTF-8 cannot encode', () => {
    expect(storableText('a\ud800b\udc00c')).toBe('a\uFFFDb\uFFFDc');
    expect(storableText('😀')).toBe('😀');
  });

  it('caps at a number of UTF-8 bytes, before a character, never through one', () => {
    expect(storableText('abcdef', 4)).toBe('abcd');
    // "€" takes 3 bytes: with 2 + 3 > 4, it is left out whole.
    expect(storableText('ab€', 4)).toBe('ab');
    expect(storableText('ab€', 5)).toBe('ab€');
    // A surrogate pair (4 bytes of UTF-8) is kept whole or left out whole.
    expect(storableText('a😀', 4)).toBe('a');
    expect(storableText('a😀', 5)).toBe('a😀');
    for (let max = 0; max <= 40; max += 1) {
      const capped = storableText('Zoë 李 😀 €€ 😀😀 ok\0', max);
      expect(utf8(capped).length).toBeLessThanOrEqual(max);
      expect(wellFormed(capped)).toBe(true);
    }
  });

  it('counts a replaced control character at its replacement’s 3 bytes', () => {
    expect(storableText('\0\0', 5)).toBe('\uFFFD');
  });
});

describe('storableBytes', () => {
  it('decodes UTF-8, turning what is not UTF-8 into U+FFFD and NUL into U+FFFD', () => {
    const bytes = Buffer.concat([utf8('ok\0'), Buffer.from([0xff, 0xfe, 0xc3]), utf8(' é')]);
    expect(storableBytes(bytes, 2048)).toBe('ok\uFFFD\uFFFD\uFFFD\uFFFD é');
  });

  it('keeps a leading byte-order mark, so the text is what was sent', () => {
    expect(storableBytes(Buffer.from([0xef, 0xbb, 0xbf, 0x61]), 10)).toBe('\uFEFFa');
  });

  it('never turns a character cut by the limit into U+FFFD: it is left out whole', () => {
    // 2047 bytes of "a", then "€" (3 bytes) straddling the 2048-byte limit.
    const bytes = utf8(`${'a'.repeat(2047)}€ and more`);
    const text = storableBytes(bytes, 2048);
    expect(text).toBe('a'.repeat(2047));
    expect(text).not.toContain('\uFFFD');
  });

  it('caps what it decodes at the limit, with every kind of input', () => {
    const nasty = Buffer.concat([
      Buffer.from([0xf0, 0x9f, 0x98]), // a 4-byte sequence cut short
      utf8('😀\0\u0001'),
      Buffer.from([0xed, 0xa0, 0x80]), // an encoded surrogate, not UTF-8
      utf8('€'.repeat(100)),
    ]);
    for (let max = 0; max <= 64; max += 1) {
      const text = storableBytes(nasty, max);
      expect(utf8(text).length).toBeLessThanOrEqual(max);
      expect(wellFormed(text)).toBe(true);
      expect(CONTROL_CHARACTER.test(text)).toBe(false);
    }
  });
});

describe('storableJson', () => {
  it('repairs every string in a JSON value, keys included, and keeps the rest', () => {
    const value = {
      subject_email: 'a@b.test',
      name: 'Ada\0',
      nested: { list: ['ok', 'x\u0007', 3, true, null], 'key\0': 'v' },
      lone: '\ud83d',
    };
    expect(storableJson(value)).toEqual({
      subject_email: 'a@b.test',
      name: 'Ada\uFFFD',
      nested: { list: ['ok', 'x\uFFFD', 3, true, null], 'key\uFFFD': 'v' },
      lone: '\uFFFD',
    });
    // The input is not changed.
    expect(value.name).toBe('Ada\0');
  });

  it('leaves what JSON.stringify writes by itself (a Date) as it is', () => {
    const at = new Date('2026-11-25T00:00:00Z');
    expect(storableJson({ at }).at).toBe(at);
  });
});
