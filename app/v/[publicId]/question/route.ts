import { withNotice } from '@/app/v/_ui/notices';
import { seeOther } from '@/app/v/_ui/respond';
import { caseRoute, clockNow, database, field, jobProducer, readProtectedForm } from '@/app/v/_ui/route-kit';
import { answerCustomQuestion } from '@/server/verification/methods/custom-question/step';

export const dynamic = 'force-dynamic';

export const POST = caseRoute(async ({ request, found, back }) => {
  const form = await readProtectedForm(request, found, back);
  if (form instanceof Response) return form;
  const result = await answerCustomQuestion(
    await database(),
    await jobProducer(),
    found.record,
    field(form, 'answer'),
    await clockNow(),
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
