import type { VerificationMethod } from '@/db/schema/values';
import type { Vendor } from '@/server/platform/stand-ins';
import { customQuestionMethod } from './custom-question/definition';
import type { MethodDefinition } from './definition';
import { emailMethod } from './email/definition';
import { governmentIdMethod } from './government-id/definition';
import { managerMethod } from './manager/definition';
import { passkeyMethod } from './passkey/definition';
import { selfieMethod } from './selfie/definition';
import { smsMethod } from './sms/definition';

/**
 * The verification methods, in the order of the database's value list (db/schema/values.ts; a test
 * holds the two together): the one list that creation, simulation, redaction, resend, the pages
 * and the console iterate. Adding a method: docs/contributors/adding-a-verification-method.md.
 */
export const METHODS = [
  emailMethod,
  smsMethod,
  governmentIdMethod,
  selfieMethod,
  customQuestionMethod,
  managerMethod,
  passkeyMethod,
] as const satisfies readonly MethodDefinition[];

type Declared = (typeof METHODS)[number];

export const METHOD_BY_KEY: Record<VerificationMethod, MethodDefinition> = Object.fromEntries(
  METHODS.map((m): [VerificationMethod, MethodDefinition] => [m.key, m]),
) as Record<VerificationMethod, MethodDefinition>;

/**
 * Why a case failed: the `failure_reason` clients read, each step's own and the further ones it
 * declares, in the methods' order.
 */
export type FailureReason = NonNullable<Declared['failureReason']> | Declared['otherFailureReasons'][number];
export const FAILURE_REASONS = METHODS.flatMap((m) => [
  ...(m.failureReason ? [m.failureReason] : []),
  ...m.otherFailureReasons,
]) as [FailureReason, ...FailureReason[]];

/** The steps that take guesses (an answer, a code), with the wrong guesses each tolerates. */
export type GuessedMethod = Extract<Declared, { attemptLimit: number }>['key'];
export const ATTEMPT_LIMITS = Object.fromEntries(
  METHODS.flatMap((m) => (m.attemptLimit === null ? [] : [[m.key, m.attemptLimit]])),
) as Record<GuessedMethod, number>;

/** The steps whose link is mailed when the case opens, and mailed again on resend. */
export type MailedMethod = Extract<Declared, { mailsLinkTo: 'subject' | 'manager' }>['key'];
export const MAILED_METHODS = METHODS.flatMap((m) => (m.mailsLinkTo ? [m.key] : [])) as [
  MailedMethod,
  ...MailedMethod[],
];

/**
 * The methods that compare the names a document shows with the names a case expects (those that
 * can fail with `name_mismatch`): a case's or template's `name_match` applies only with one of them.
 */
export const NAME_COMPARING_METHODS = METHODS.flatMap((m) =>
  (m.otherFailureReasons as readonly string[]).includes('name_mismatch') ? [m.key] : [],
) as VerificationMethod[];

/** Whether `methods` requests a method that compares names (see NAME_COMPARING_METHODS). */
export function comparesNames(methods: Partial<Record<string, boolean>>): boolean {
  return NAME_COMPARING_METHODS.some((method) => methods[method] === true);
}

/** `name_match`'s refusal when no method that compares names is requested. */
export const NAME_MATCH_WITHOUT_COMPARISON = `only accepted when ${NAME_COMPARING_METHODS.join(' or ')} is requested`;

/** The outside services these steps rely on, each once. */
export function vendorsOf(methods: readonly VerificationMethod[]): Vendor[] {
  return [...new Set(methods.flatMap((method) => METHOD_BY_KEY[method].vendor ?? []))];
}

/** Whether any of these steps has the subject hand over pictures. */
export function takesPictures(methods: readonly VerificationMethod[]): boolean {
  return methods.some((method) => METHOD_BY_KEY[method].takesPictures);
}

/**
 * The methods a case actually runs: what the client asked for, plus what each adds (the selfie
 * whenever the government ID is asked, to match the face against the document's photo).
 */
export function expandRequestedMethods(
  requested: Partial<Record<VerificationMethod, boolean>>,
): VerificationMethod[] {
  const chosen = new Set<VerificationMethod>();
  for (const method of METHODS) {
    if (requested[method.key] !== true) continue;
    chosen.add(method.key);
    for (const added of method.adds) chosen.add(added);
  }
  return METHODS.map((m) => m.key).filter((key) => chosen.has(key));
}

/** The steps of a case one completion of `method` verifies (the ID check passes ID and selfie). */
export function stepsPassingTogether(
  requested: readonly VerificationMethod[],
  method: VerificationMethod,
): VerificationMethod[] {
  const together = new Set<VerificationMethod>([method, ...METHOD_BY_KEY[method].passesWith]);
  return requested.filter((m) => together.has(m));
}
