import { describe, expect, it } from 'vitest';
import { languagePagePath, languagePageTarget } from './page-language';

describe('the language page’s way back', () => {
  it('carries the page it was opened from as its part below the case, and leads back there', () => {
    expect(languagePagePath('abc', '/v/abc')).toBe('/v/abc/language');
    expect(languagePagePath('abc', '/v/abc/manager/t0k3n')).toBe('/v/abc/language?from=%2Fmanager%2Ft0k3n');
    expect(languagePageTarget('abc', null)).toBe('/v/abc');
    expect(languagePageTarget('abc', '/manager/t0k3n')).toBe('/v/abc/manager/t0k3n');
  });

  it('never leads outside the case, whatever `from` says', () => {
    for (const from of [
      '//evil.test/x',
      'https://evil.test',
      '/../other',
      '/x?y=1',
      '/x#y',
      '',
      '/',
      '\\\\evil.test',
    ]) {
      expect(languagePageTarget('abc', from), from).toBe('/v/abc');
    }
  });
});
