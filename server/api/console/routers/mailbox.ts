import { z } from 'zod';
import { managerProcedure, router } from '@/server/api/trpc/init';
import { listTeamDevMail } from '@/server/mail/dev-mailbox';
import { AppError } from '@/server/platform/errors';

export const consoleMailboxRouter = router({
  /**
   * Owners and admins only: the messages carry the links and codes that complete the team's
   * verifications, which a viewer must not be able to use.
   */
  list: managerProcedure.input(z.object({}).optional()).query(async ({ ctx }) => {
    if (ctx.env.SMTP_URL && ctx.env.SMS_PROVIDER !== 'dev') {
      throw new AppError('NOT_FOUND', 'Messages go to a real mail server and SMS provider here.');
    }
    const rows = await listTeamDevMail(ctx.db, ctx.teamId, ctx.user.email);
    return rows.map((m) => ({
      id: m.id,
      to: m.to,
      subject: m.subject,
      text: m.text,
      created_at: m.createdAt.toISOString(),
    }));
  }),
});
