import { postSmsForm } from '@/server/api/pages/step-form-handlers';

export const dynamic = 'force-dynamic';

/** Send (or resend) a code to a phone number, or check a code the subject typed. */
export async function POST(request: Request, context: { params: Promise<{ publicId: string }> }) {
  return postSmsForm(request, await context.params);
}
