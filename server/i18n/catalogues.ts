import ar from './messages/ar.json' with { type: 'json' };
import de from './messages/de.json' with { type: 'json' };
import en from './messages/en.json' with { type: 'json' };
import es from './messages/es.json' with { type: 'json' };
import fr from './messages/fr.json' with { type: 'json' };
import it from './messages/it.json' with { type: 'json' };
import ja from './messages/ja.json' with { type: 'json' };
import ko from './messages/ko.json' with { type: 'json' };
import nl from './messages/nl.json' with { type: 'json' };
import pl from './messages/pl.json' with { type: 'json' };
import ptBR from './messages/pt-BR.json' with { type: 'json' };
import zhCN from './messages/zh-CN.json' with { type: 'json' };
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
