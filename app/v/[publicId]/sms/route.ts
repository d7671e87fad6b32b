import { type NoticeCode, withNotice } from '@/app/v/_ui/notices';
import { seeOther } from '@/app/v/_ui/respond';
import {
  caseRoute,
  clockNow,
  database,
  field,
  jobProducer,
  providers,
  readProtectedForm,
} from '@/app/v/_ui/route-kit';
import { checkSmsCode, phoneOnFile, sendSmsCode } from '@/server/verification/methods/sms/step';

export const dynamic = 'force-dynamic';

/** Send (or resend) a code to a phone number, or check a code the subject typed. */
export const POST = caseRoute(async ({ request, found, back }) => {
  const form = await readProtectedForm(request, found, back);
  if (form instanceof Response) return form;
  const db = await database();
  const jobs = await jobProducer();
  const now = await clockNow();
  const action = field(form, 'action');

  if (action === 'send' || action === 'resend') {
    const phoneInput = action === 'resend' ? (phoneOnFile(found.record) ?? '') : field(form, 'phone');
    const sent = await sendSmsCode(db, jobs, {
      caseId: found.record.id,
      livemode: found.record.livemode,
      phoneInput,
      teamName: found.teamName,
      now,
      sender: (await providers(found.record.livemode)).sms,
    });
    if (sent.ok) return seeOther(withNotice(back, 'sms-sent'));
    const codes: Record<typeof sent.why, NoticeCode> = {
      invalid_phone: 'sms-invalid-phone',
      too_soon: 'sms-too-soon',
      too_many: 'sms-too-many',
      send_failed: 'sms-send-failed',
      unavailable: 'unavailable',
    };
    return seeOther(withNotice(back, codes[sent.why]));
  }

  const checked = await checkSmsCode(db, jobs, found.record, field(form, 'code'), now);
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
