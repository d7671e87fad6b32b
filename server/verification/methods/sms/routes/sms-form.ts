import type { MethodRoutes } from '@/server/api/page-kit/method-routes';
import { type NoticeCode, withNotice } from '@/server/api/page-kit/notices';
import { answerCaseStep, field, readProtectedForm } from '@/server/api/page-kit/page-request';
import { seeOther } from '@/server/api/page-kit/respond';
import { requestSmsCode, submitSmsCode } from '@/server/application/verification/sms-code';
import type { SendCodeResult } from '@/server/verification/methods/sms/step';

const SEND_REFUSALS: Record<Extract<SendCodeResult, { ok: false }>['why'], NoticeCode> = {
  invalid_phone: 'sms-invalid-phone',
  too_soon: 'sms-too-soon',
  too_many: 'sms-too-many',
  send_failed: 'sms-send-failed',
  unavailable: 'unavailable',
};

/** POST /v/<id>/sms: send (or resend) a code to a phone number, or check a code the subject typed. */
export function postSmsForm(request: Request, params: { publicId: string }): Promise<Response> {
  return answerCaseStep(request, params.publicId, async (req) => {
    const { ctx, found, back } = req;
    const form = await readProtectedForm(request, req, back);
    if (form instanceof Response) return form;
    const action = field(form, 'action');

    if (action === 'send' || action === 'resend') {
      const sent = await requestSmsCode(
        ctx,
        found,
        action === 'resend'
          ? { resend: true, defaultLocale: ctx.config.DEFAULT_LOCALE }
          : { resend: false, phone: field(form, 'phone'), defaultLocale: ctx.config.DEFAULT_LOCALE },
      );
      return seeOther(withNotice(back, sent.ok ? 'sms-sent' : SEND_REFUSALS[sent.why]));
    }

    const checked = await submitSmsCode(ctx, found, field(form, 'code'));
    switch (checked.result) {
      case 'verified':
        return seeOther(withNotice(back, 'sms-verified'));
      case 'wrong':
        return seeOther(withNotice(back, 'sms-wrong', checked.attemptsLeft));
      case 'malformed':
        return seeOther(withNotice(back, 'sms-malformed'));
      case 'expired':
        return seeOther(withNotice(back, 'sms-expired'));
      case 'no_code':
        return seeOther(withNotice(back, 'sms-no-code'));
      default:
        // Failed or over: the page itself now says what happened.
        return seeOther(back);
    }
  });
}

/** The SMS step's form, under `/v/<public id>/sms`. */
export const smsRoutes: MethodRoutes = {
  segment: 'sms',
  paths: { '': { POST: (request, { publicId }) => postSmsForm(request, { publicId }) } },
};
