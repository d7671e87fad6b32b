import type { VerificationMethod } from '@/db/schema/values';
import { customQuestionModule } from './custom-question/module';
import { emailModule } from './email/module';
import { governmentIdModule } from './government-id/module';
import { managerModule } from './manager/module';
import type { MethodModule } from './method-module';
import { passkeyModule } from './passkey/module';
import { selfieModule } from './selfie/module';
import { smsModule } from './sms/module';

/**
 * Every method's module, in the registry's order (registry.test.ts holds the two together): what
 * the application and API layers iterate. Adding a method: its folder, one line here and in
 * registry.ts (docs/contributors/adding-a-verification-method.md).
 */
export const METHOD_MODULES = [
  emailModule,
  smsModule,
  governmentIdModule,
  selfieModule,
  customQuestionModule,
  managerModule,
  passkeyModule,
] as const satisfies readonly MethodModule[];

export type ListedModule = (typeof METHOD_MODULES)[number];

/** The modules as the hooks they may have, for code that asks each one (redaction, the closed page). */
export const MODULES: readonly MethodModule[] = METHOD_MODULES;

export const MODULE_BY_KEY = Object.fromEntries(
  METHOD_MODULES.map((module): [VerificationMethod, MethodModule] => [module.definition.key, module]),
) as Record<VerificationMethod, MethodModule>;
