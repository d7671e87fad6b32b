import { describe, expect, it } from 'vitest';
import { supportedLocale } from './locales';

describe('supportedLocale', () => {
  it.each([
    ['de', 'de'],
    ['de-AT', 'de'],
    ['DE-at', 'de'],
    ['en-GB', 'en'],
    ['fr-CA', 'fr'],
    ['pt', 'pt-BR'],
    ['pt-BR', 'pt-BR'],
    ['pt-PT', 'pt-BR'],
    ['zh', 'zh-CN'],
    ['zh-Hans', 'zh-CN'],
    ['ar-EG', 'ar'],
    ['ja-JP', 'ja'],
  ])('matches %s to %s', (tag, locale) => {
    expect(supportedLocale(tag)).toBe(locale);
  });

  it.each(['sv', 'xx', 'und', '', 'not a tag', 'en_US!'])('has no locale for %j', (tag) => {
    expect(supportedLocale(tag)).toBeNull();
  });
});
