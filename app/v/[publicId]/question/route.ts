import { postQuestionForm } from '@/server/api/pages/step-form-handlers';

export const dynamic = 'force-dynamic';

/** The subject's answer to the team's question. */
export async function POST(request: Request, context: { params: Promise<{ publicId: string }> }) {
  return postQuestionForm(request, await context.params);
}
