import { describe, expect, it } from 'vitest';
import { chooseLocale, type LocaleChoices, writtenLocale } from './choose-locale';

const none: LocaleChoices = {
  chosen: null,
  caseLocale: null,
  acceptLanguage: null,
  teamDefault: null,
  fallback: 'en',
  pseudo: false,
};

describe('chooseLocale', () => {
  it('takes the visitor’s choice first, as the tag it stands for', () => {
    expect(
      chooseLocale({ ...none, chosen: 'ja', caseLocale: 'de', acceptLanguage: 'fr', teamDefault: 'es' }),
    ).toBe('ja');
    expect(chooseLocale({ ...none, chosen: 'pt', caseLocale: 'de' })).toBe('pt-BR');
  });

  it('ignores a choice it cannot write in, and goes on down the list', () => {
    expect(chooseLocale({ ...none, chosen: 'tlh', caseLocale: 'de' })).toBe('de');
    expect(chooseLocale({ ...none, chosen: '<script>', acceptLanguage: 'nl' })).toBe('nl');
  });

  it('takes the case’s locale over the browser’s languages', () => {
    expect(chooseLocale({ ...none, caseLocale: 'de', acceptLanguage: 'fr-FR,fr;q=0.9' })).toBe('de');
  });

  it('takes the browser’s most wanted language it can write in, by weight and fallback', () => {
    expect(chooseLocale({ ...none, acceptLanguage: 'sv;q=1, de-AT;q=0.8, fr;q=0.9' })).toBe('fr');
    expect(chooseLocale({ ...none, acceptLanguage: 'de-CH, en;q=0.5' })).toBe('de');
    expect(chooseLocale({ ...none, acceptLanguage: 'fr;q=0, ja;q=0.2' })).toBe('ja');
    expect(chooseLocale({ ...none, acceptLanguage: 'zh-Hans-CN' })).toBe('zh-CN');
  });

  it('falls back to the team’s default, then the service’s', () => {
    expect(chooseLocale({ ...none, acceptLanguage: 'sv, fi', teamDefault: 'pl' })).toBe('pl');
    expect(chooseLocale({ ...none, acceptLanguage: '*', fallback: 'it' })).toBe('it');
    expect(chooseLocale({ ...none, acceptLanguage: ';;;,,q=x' })).toBe('en');
  });

  it('offers the pseudo-locale only where allowed', () => {
    expect(chooseLocale({ ...none, chosen: 'en-XA', pseudo: true })).toBe('en-XA');
    expect(chooseLocale({ ...none, acceptLanguage: 'en-XA', pseudo: true })).toBe('en-XA');
    expect(chooseLocale({ ...none, chosen: 'en-XA', pseudo: false, teamDefault: 'de' })).toBe('en');
  });
});

describe('writtenLocale', () => {
  it('is the case’s, then the team’s default, then the service’s', () => {
    expect(writtenLocale('ar', 'de', 'en')).toBe('ar');
    expect(writtenLocale(null, 'de', 'en')).toBe('de');
    expect(writtenLocale(null, null, 'fr')).toBe('fr');
  });
});
