import { type MessageFormatElement, TYPE } from '@formatjs/icu-messageformat-parser';
import { PSEUDO_LOCALE_TAG } from '@/server/platform/env';

/**
 * The pseudo-locale: English with every letter accented and every vowel doubled (about a third
 * longer), so that a page rendered in it shows at a glance, and a test proves, that each string
 * came from the catalogue (one that bypassed it stays plain ASCII) and that layouts survive longer
 * translations. Offered outside production only (`?lang=en-XA`, as browsers name it).
 */
export const PSEUDO_LOCALE = PSEUDO_LOCALE_TAG;

const ACCENTED: Record<string, string> = Object.fromEntries(
  [
    ...('aábƀcçdďeéfƒgĝhĥiíjĵkķlĺmṁnñoópþqǫrŕsštţuúvṽwŵxẋyýzž'.match(/../gu) ?? []),
    ...('AÁBƁCÇDÐEÉFƑGĜHĤIÍJĴKĶLĹMṀNÑOÓPÞQǪRŔSŠTŢUÚVṼWŴXẊYÝZŽ'.match(/../gu) ?? []),
  ].map((pair) => [pair[0] as string, pair.slice(1)]),
);

/** "Verify" → "Véérííƒýý": each ASCII letter accented, each vowel doubled. */
export function pseudoText(text: string): string {
  return text.replace(/[A-Za-z]/g, (letter) => {
    const accented = ACCENTED[letter] ?? letter;
    return /[aeiouy]/i.test(letter) ? accented + accented : accented;
  });
}

/** The message with its own words pseudo-localised; arguments (data) and ICU syntax untouched. */
export function pseudoMessage(elements: MessageFormatElement[]): MessageFormatElement[] {
  return elements.map((element): MessageFormatElement => {
    switch (element.type) {
      case TYPE.literal:
        return { ...element, value: pseudoText(element.value) };
      case TYPE.tag:
        return { ...element, children: pseudoMessage(element.children) };
      case TYPE.plural:
      case TYPE.select:
        return {
          ...element,
          options: Object.fromEntries(
            Object.entries(element.options).map(([key, option]) => [
              key,
              { ...option, value: pseudoMessage(option.value) },
            ]),
          ),
        } as MessageFormatElement;
      default:
        return element;
    }
  });
}
