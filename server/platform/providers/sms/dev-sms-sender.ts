import type { Queryable } from '@/db/client';
import { devMailbox } from '@/db/schema';
import { logger } from '@/server/platform/logger';
import type { SmsSender } from './sms-sender';

/** The dev mailbox's subject line for a text message. */
export const DEV_SMS_SUBJECT = 'Text message';

/**
 * Development transport: nothing leaves the machine. The message is kept in the dev mailbox,
 * where the console shows it to the team's owners and admins; the log says only that it was
 * kept (a code in a log line is a code anyone with the logs can use). Never selected unless
 * SMS_PROVIDER is `dev`, the default.
 */
export function createDevSmsSender(db: Queryable): SmsSender {
  return {
    async send({ to, body, caseId }) {
      const [row] = await db
        .insert(devMailbox)
        .values({ to, subject: DEV_SMS_SUBJECT, text: body, caseId })
        .returning({ id: devMailbox.id });
      logger.info('text message kept in the dev mailbox (not sent)', { dev_mailbox_id: row?.id });
      // The dev mailbox entry carries the case id: redaction deletes it with the case's mails.
      return null;
    },
  };
}
