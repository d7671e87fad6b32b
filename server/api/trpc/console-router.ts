import { consoleAccountRouter } from '@/server/api/console/routers/account';
import { consoleAuditRouter } from '@/server/api/console/routers/audit';
import { consoleCasesRouter } from '@/server/api/console/routers/cases';
import { consoleImportsRouter } from '@/server/api/console/routers/imports';
import { consoleMailboxRouter } from '@/server/api/console/routers/mailbox';
import { consoleOidcClientsRouter } from '@/server/api/console/routers/oidc-clients';
import { consolePasskeysRouter } from '@/server/api/console/routers/passkeys';
import { consoleAuthRouter } from '@/server/api/console/routers/session';
import { consoleTeamRouter } from '@/server/api/console/routers/team';
import { consoleTemplatesRouter } from '@/server/api/console/routers/templates';
import { consoleWebhooksRouter } from '@/server/api/console/routers/webhooks';
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
  imports: consoleImportsRouter,
  account: consoleAccountRouter,
  audit: consoleAuditRouter,
  mailbox: consoleMailboxRouter,
  webhooks: consoleWebhooksRouter,
  team: consoleTeamRouter,
  templates: consoleTemplatesRouter,
  oidcClients: consoleOidcClientsRouter,
  passkeys: consolePasskeysRouter,
});
