import type { MessageKey } from '@/server/i18n/catalogues';
import type { Translator } from '@/server/i18n/translator';
import { type ListedModule, METHOD_MODULES } from '@/server/verification/methods/modules';

/**
 * Results of a form, carried across the redirect as a short code (`?n=`) and shown from this fixed
 * table (each a message of the catalogue, `notice.<code>`), so nothing a visitor puts in the URL
 * is ever echoed into the page. `error`: said as an alert, in the error style. Each method's
 * module declares its forms' notices; the page's own are here.
 */
const PAGE_NOTICES = { 'form-expired': true, unavailable: true } as const;

/** Every module's notices' codes (distributed over the modules: each has its own). */
type ModuleNoticeCode<M> = M extends { notices: infer Codes } ? keyof Codes & string : never;
export type NoticeCode = keyof typeof PAGE_NOTICES | ModuleNoticeCode<ListedModule>;

const NOTICES: Readonly<Record<string, boolean>> = Object.assign(
  {},
  PAGE_NOTICES,
  ...METHOD_MODULES.map((module) => module.notices),
);

/** The values the notices' messages quote (the phone number's example, the largest picture). */
const NOTICE_VALUES = Object.assign({}, ...METHOD_MODULES.map((module) => module.noticeValues));

export interface Notice {
  text: string;
  error: boolean;
}

/** A code's message: one missing from the catalogue fails the type check here. */
const noticeKey = (code: NoticeCode): MessageKey => `notice.${code}`;

export function noticeFor(t: Translator, code: string | null, left: string | null): Notice | null {
  if (!code || !Object.hasOwn(NOTICES, code)) return null;
  const error = NOTICES[code] === true;
  const text = t.text(noticeKey(code as NoticeCode), NOTICE_VALUES);
  const remaining = Number(left);
  if (Number.isInteger(remaining) && remaining > 0 && remaining < 10 && error) {
    const second = t.text('step.attemptsLeft', { left: remaining });
    return { text: t.text('page.twoSentences', { first: text, second }), error };
  }
  return { text, error };
}

export function withNotice(path: string, code: NoticeCode, left?: number): string {
  const params = new URLSearchParams({ n: code });
  if (left !== undefined) params.set('l', String(left));
  return `${path}?${params.toString()}#notice`;
}
