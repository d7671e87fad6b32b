import type { MethodRoutes } from '@/server/api/page-kit/method-routes';
import { withNotice } from '@/server/api/page-kit/notices';
import { answerCaseStep, field, readProtectedForm } from '@/server/api/page-kit/page-request';
import { seeOther } from '@/server/api/page-kit/respond';
import { answerQuestion } from '@/server/application/verification/answer-question';

/** POST /v/<id>/question: the subject's answer to the team's question. */
export function postQuestionForm(request: Request, params: { publicId: string }): Promise<Response> {
  return answerCaseStep(request, params.publicId, async (req) => {
    const { ctx, found, back } = req;
    const form = await readProtectedForm(request, req, back);
    if (form instanceof Response) return form;
    const result = await answerQuestion(ctx, found, field(form, 'answer'));
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
}

/** The custom question's form, under `/v/<public id>/question`. */
export const customQuestionRoutes: MethodRoutes = {
  segment: 'question',
  paths: { '': { POST: (request, { publicId }) => postQuestionForm(request, { publicId }) } },
};
