import type { Translator } from '@/server/i18n/translator';
import { shownName } from '@/server/teams/presentation';

/** How long a code sent by text message is valid, in minutes. */
export const SMS_CODE_TTL_MINUTES = 10;

/**
 * The text message carrying a code, in the subject's language. Each locale's wording is held to
 * one SMS segment with a 30-character team name in any script (a test checks every locale); a
 * team's own name, which has no limit, is cut to that length here.
 */
export function smsCodeText(t: Translator, input: { teamName: string; code: string }): string {
  return t.text('sms.text', {
    team: shownName(input.teamName),
    code: input.code,
    minutes: SMS_CODE_TTL_MINUTES,
  });
}
