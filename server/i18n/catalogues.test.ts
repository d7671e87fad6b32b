import { type MessageFormatElement, parse, TYPE } from '@formatjs/icu-messageformat-parser';
import { SegmentedMessage } from 'sms-segments-calculator';
import { describe, expect, it } from 'vitest';
import { smsCodeText } from '@/server/verification/methods/sms/code-text';
import { CATALOGUES, type MessageKey } from './catalogues';
import { SUPPORTED_LOCALES } from './supported-locales';
import { translator } from './translator';

const english = CATALOGUES.en;
const keys = Object.keys(english).sort() as MessageKey[];
const translated = SUPPORTED_LOCALES.filter((locale) => locale !== 'en');

/** The placeholders (`{team}`), plural/select arguments and tags (`<strong>`) of a message. */
function namesIn(elements: MessageFormatElement[], into = new Set<string>()): Set<string> {
  for (const element of elements) {
    if (element.type === TYPE.literal || element.type === TYPE.pound) continue;
    into.add(element.type === TYPE.tag ? `<${element.value}>` : `{${element.value}}`);
    if (element.type === TYPE.tag) namesIn(element.children, into);
    if (element.type === TYPE.plural || element.type === TYPE.select) {
      for (const option of Object.values(element.options)) namesIn(option.value, into);
    }
  }
  return into;
}

describe('the message catalogues', () => {
  it.each(SUPPORTED_LOCALES)('%s has exactly the keys of the English catalogue', (locale) => {
    expect(Object.keys(CATALOGUES[locale]).sort()).toEqual(keys);
  });

  it.each(SUPPORTED_LOCALES)('every %s message parses as ICU MessageFormat', (locale) => {
    for (const key of keys) {
      expect(() => parse(CATALOGUES[locale][key]), `${locale} ${key}`).not.toThrow();
    }
  });

  it.each(translated)('every %s message has the placeholders and tags of the English one', (locale) => {
    for (const key of keys) {
      const wanted = [...namesIn(parse(english[key]))].sort();
      const found = [...namesIn(parse(CATALOGUES[locale][key]))].sort();
      expect(found, `${locale} ${key}`).toEqual(wanted);
    }
  });

  it.each(translated)('%s is translated, not copied from English', (locale) => {
    // A message of one or two words may be the same (German says "Selfie" too); a sentence may not.
    const words = (message: string) => message.replace(/\{[^}]*\}/g, ' ').match(/\p{L}+/gu)?.length ?? 0;
    const same = keys.filter((key) => CATALOGUES[locale][key] === english[key] && words(english[key]) > 2);
    expect(same).toEqual([]);
  });

  it('every plural has an "other" case, in every locale', () => {
    const withoutOther = (elements: MessageFormatElement[]): boolean =>
      elements.some(
        (element) =>
          ((element.type === TYPE.plural || element.type === TYPE.select) && !('other' in element.options)) ||
          (element.type === TYPE.tag && withoutOther(element.children)),
      );
    for (const locale of SUPPORTED_LOCALES) {
      for (const key of keys)
        expect(withoutOther(parse(CATALOGUES[locale][key])), `${locale} ${key}`).toBe(false);
    }
  });
});

describe('the text message with a code', () => {
  // The longest allowed team name (30 characters, as the display name counts them) in the
  // scripts a team may write it in: plain Latin keeps GSM-7 (160 per segment), the others need
  // UCS-2 (70 per segment).
  const thirty = (name: string) => name.repeat(3).slice(0, 30);
  const longestNames = {
    'GSM-7 Latin': thirty('Northwind Traders Logistics AG'),
    'Latin outside GSM-7': thirty('Łódzka Spółdzielnia Mieszkaniowa'),
    Japanese: thirty('株式会社ノースウィンド・トレーダーズ物流サービス'),
    Arabic: thirty('شركة نورث ويند للتجارة والخدمات اللوجستية'),
    Korean: thirty('노스윈드 트레이더스 로지스틱스 주식회사 '),
  };

  it('cuts a longer team name (a team’s own name has no limit) to 30, never inside a character', () => {
    const long = 'Spółdzielnia Mieszkaniowa Śródmieście Łódź 😀';
    for (const locale of SUPPORTED_LOCALES) {
      const text = smsCodeText(translator(locale), { teamName: long, code: '123456' });
      expect(new SegmentedMessage(text).segmentsCount, `${locale}: ${text}`).toBe(1);
      expect(text).toContain(long.slice(0, 30));
      expect(text).not.toContain(long.slice(0, 31));
    }
    const emoji = smsCodeText(translator('en'), { teamName: `${'x'.repeat(29)}😀`, code: '1' });
    expect(emoji).toContain('x'.repeat(29));
    expect(emoji).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])/);
  });

  it('takes names of exactly 30 characters', () => {
    for (const name of Object.values(longestNames)) expect(name).toHaveLength(30);
  });

  it.each(SUPPORTED_LOCALES)('fits one SMS segment in %s, whatever the script of the team name', (locale) => {
    for (const [script, teamName] of Object.entries(longestNames)) {
      const text = smsCodeText(translator(locale), { teamName, code: '123456' });
      const message = new SegmentedMessage(text);
      expect(message.segmentsCount, `${locale}, ${script} name (${message.encodingName}): ${text}`).toBe(1);
      expect(text).toContain('123456');
      expect(text).toContain(teamName);
    }
  });
});
