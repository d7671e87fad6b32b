import { consoleAuditRouter } from '../audit/router';
import { consoleAuthRouter } from '../auth/console-router';
import { consoleAccountRouter } from '../billing/console-router';
import { consoleCasesRouter } from '../cases/console-router';
import { router } from '../trpc/init';
import { consoleWebhooksRouter } from '../webhooks/console-router';
import { consoleMailboxRouter } from './dev-mailbox';

/**
 * What the console calls at /api/trpc (session cookie). None of these carry OpenAPI meta, so the
 * REST facade never publishes them.
 */
export const consoleRouter = router({
  session: consoleAuthRouter.session,
  members: consoleAuthRouter.members,
  keys: consoleAuthRouter.keys,
  cases: consoleCasesRouter,
  account: consoleAccountRouter,
  audit: consoleAuditRouter,
  mailbox: consoleMailboxRouter,
  webhooks: consoleWebhooksRouter,
});
