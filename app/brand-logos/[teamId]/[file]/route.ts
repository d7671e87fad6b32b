import { showTeamLogo } from '@/server/api/pages/logo-handler';

export const dynamic = 'force-dynamic';

/** A team's logo, as its pages and mails show it. */
export async function GET(request: Request, context: { params: Promise<{ teamId: string; file: string }> }) {
  return showTeamLogo(request, await context.params);
}
