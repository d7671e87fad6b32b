import type { VerificationMethod } from '@/db/schema/values';
import { customQuestionMethod } from '@/server/verification/methods/custom-question/definition';
import { emailMethod } from '@/server/verification/methods/email/definition';
import { governmentIdMethod } from '@/server/verification/methods/government-id/definition';
import { managerMethod } from '@/server/verification/methods/manager/definition';
import { MAILED_METHODS, METHOD_BY_KEY, METHODS } from '@/server/verification/methods/registry';

/**
 * The console's published vocabulary for verification methods: what its browser pages know about
 * them, as plain data drawn from the method registry. The pages import this module, never the
 * registry or a method's folder, so what the browser learns of a method is decided here, beside
 * the console's procedures, and a method's rules stay on the server.
 */

/** How the console names a method (a key it does not know is shown as it is). */
export function methodLabel(key: string): string {
  return METHOD_BY_KEY[key as VerificationMethod]?.label ?? key;
}

/** The methods whose step mails a link: resending a case's links can reach them. */
export const LINK_MAILING_METHODS: readonly VerificationMethod[] = MAILED_METHODS;

/**
 * The New case form: the methods a helpdesk agent picks from, in the words it offers them in (the
 * selfie is not among them: a government ID check brings it), the one ticked at first, and the
 * methods that ask the agent for more (the question and its answer; the manager's name and address;
 * what a document showing another name does).
 */
export const NEW_CASE_FORM = {
  choices: METHODS.flatMap((m) => (m.choice ? [{ key: m.key, label: m.choice }] : [])),
  initial: emailMethod.key,
  asksQuestion: customQuestionMethod.key,
  namesManager: managerMethod.key,
  comparesNames: governmentIdMethod.key,
};

/** A method offered in the New case form. */
export type ChosenMethod = (typeof NEW_CASE_FORM.choices)[number]['key'];

/**
 * The methods a CSV import can give every row of a file without a methods column: those that
 * need nothing more per person (a question's answer or a manager comes from the row's columns).
 */
export const IMPORT_FORM = {
  choices: NEW_CASE_FORM.choices.filter(
    ({ key }) => key !== NEW_CASE_FORM.asksQuestion && key !== NEW_CASE_FORM.namesManager,
  ),
  initial: emailMethod.key,
};
