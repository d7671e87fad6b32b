import { consoleAuditRouter } from '@/server/audit/router';
import { consoleAuthRouter } from '@/server/auth/console-router';
import { consoleAccountRouter } from '@/server/billing/console-router';
import { consoleCasesRouter } from '@/server/cases/console-router';
import { consoleMailboxRouter } from '@/server/mail/console-router';
import { consoleTeamRouter } from '@/server/teams/console-router';
import { consoleWebhooksRouter } from '@/server/webhooks/console-router';
import { router } from './init';

/**
 * What the console calls at /api/trpc (session cookie). None of these carry OpenAPI meta, so the
 * REST facade never publishes them.
 */
export const consoleRouter = router({
  session: consoleAuthRouter.session,
  members: consoleAuthRouter.members,
  invitations: consoleAuthRouter.invitations,
  keys: consoleAuthRouter.keys,
  cases: consoleCasesRouter,
  account: consoleAccountRouter,
  audit: consoleAuditRouter,
  mailbox: consoleMailboxRouter,
  webhooks: consoleWebhooksRouter,
  team: consoleTeamRouter,
});
