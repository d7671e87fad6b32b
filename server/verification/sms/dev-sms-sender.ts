import { logger } from '@/server/lib/logger';
import type { SmsSender } from './sms-sender';

/**
 * Development transport: nothing leaves the machine, the message is written to the log (where a
 * developer reads the code). Never selected unless SMS_PROVIDER is `dev`, the default.
 */
export function createDevSmsSender(
  log: (line: string, fields: Record<string, unknown>) => void = logger.info,
): SmsSender {
  return {
    async send({ to, body }) {
      log('sms (dev transport, not sent)', { to, body });
    },
  };
}
