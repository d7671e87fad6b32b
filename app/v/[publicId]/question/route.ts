import { systemClock } from '@/server/lib/clock';
import { answerCustomQuestion } from '@/server/verification/custom-question-step';
import { withNotice } from '../../_ui/notices';
import { notFoundPage, seeOther } from '../../_ui/respond';
import { database, field, loadCase, readProtectedForm } from '../../_ui/route-kit';

export const dynamic = 'force-dynamic';

export async function POST(
  request: Request,
  context: { params: Promise<{ publicId: string }> },
): Promise<Response> {
  const { publicId } = await context.params;
  const found = await loadCase(publicId);
  if (!found) return notFoundPage();
  const back = `/v/${publicId}`;
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
}
