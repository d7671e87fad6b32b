import type { MethodRoutes } from '@/server/api/page-kit/method-routes';
import { customQuestionRoutes } from './custom-question/routes/question-form';
import { emailRoutes } from './email/routes/email-link';
import { governmentIdRoutes } from './government-id/routes/identity';
import { managerRoutes } from './manager/routes/manager-link';
import { passkeyRoutes } from './passkey/routes/passkey-ceremony';
import { smsRoutes } from './sms/routes/sms-form';

/**
 * Every method's pages and forms (its folder's `routes/`), which the one route under
 * `/v/<public id>/<segment>/…` serves (server/api/pages/step-route.ts). These files are the API
 * layer's, though they sit with their method: the domain never imports them.
 */
export const METHOD_ROUTES: readonly MethodRoutes[] = [
  emailRoutes,
  smsRoutes,
  governmentIdRoutes,
  customQuestionRoutes,
  managerRoutes,
  passkeyRoutes,
];
