import { systemClock } from '@/server/lib/clock';
import { answerCustomQuestion } from '@/server/verification/custom-question-step';
import { withNotice } from '../../_ui/notices';
import { seeOther } from '../../_ui/respond';
import { caseRoute, database, field, readProtectedForm } from '../../_ui/route-kit';

export const dynamic = 'force-dynamic';

export const POST = caseRoute(async ({ request, found, back }) => {
  const form = await readProtectedForm(request, found, back);
  if (form instanceof Response) return form;
  const result = await answerCustomQuestion(
    await database(),
    found.record,
    field(form, 'answer'),
    systemClock(),
  );
  switch (result.result) {
    case 'verified':
      return seeOther(withNotice(back, 'question-verified'));
    case 'wrong':
      return seeOther(withNotice(back, 'question-wrong', result.attemptsLeft));
    case 'empty':
      return seeOther(withNotice(back, 'question-empty'));
    default:
      return seeOther(back);
  }
});
