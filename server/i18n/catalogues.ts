import ar from './messages/ar.json';
import de from './messages/de.json';
import en from './messages/en.json';
import es from './messages/es.json';
import fr from './messages/fr.json';
import it from './messages/it.json';
import ja from './messages/ja.json';
import ko from './messages/ko.json';
import nl from './messages/nl.json';
import pl from './messages/pl.json';
import ptBR from './messages/pt-BR.json';
import zhCN from './messages/zh-CN.json';
import type { Locale } from './supported-locales';

/**
 * Every string a subject or a manager meets, in ICU MessageFormat, one catalogue per supported
 * locale. English is the source: its keys are the keys, and a test holds every other catalogue to
 * exactly those keys, each message parsing, with the same placeholders and tags.
 */
export type MessageKey = keyof typeof en;
export type Catalogue = Record<MessageKey, string>;

export const CATALOGUES: Record<Locale, Catalogue> = {
  en,
  de,
  fr,
  es,
  'pt-BR': ptBR,
  it,
  nl,
  pl,
  ja,
  ko,
  'zh-CN': zhCN,
  ar,
};
