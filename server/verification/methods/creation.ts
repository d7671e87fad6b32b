import type { VerificationMethod } from '@/db/schema';
import { customQuestionCreateFields, customQuestionSettings } from './custom-question/create-input';
import { managerCreateFields, managerSettings } from './manager/create-input';

/**
 * What the methods that take input at creation add to a case's create body, and the step settings
 * they make of it. A method's fields are accepted only when it is requested, and required then.
 */
type MethodCreateInput = Parameters<typeof customQuestionSettings>[0] & Parameters<typeof managerSettings>[0];

const CREATION_INPUT = {
  custom_question: { fields: customQuestionCreateFields, settings: customQuestionSettings },
  manager: { fields: managerCreateFields, settings: managerSettings },
} satisfies Partial<
  Record<
    VerificationMethod,
    {
      fields: Record<string, unknown>;
      settings: (input: MethodCreateInput) => Promise<Record<string, unknown> | undefined>;
    }
  >
>;

/** Every method's create fields, for the create body's schema. */
export const METHOD_CREATE_FIELDS = { ...customQuestionCreateFields, ...managerCreateFields };

/** Which create fields go with which method. */
export const CREATE_FIELDS_BY_METHOD = Object.entries(CREATION_INPUT).map(
  ([method, { fields }]) => [method as VerificationMethod, Object.keys(fields)] as const,
);

/**
 * The steps' settings a new case starts with, from its create body (slow work, such as hashing an
 * answer, happens here: before the case's transaction, never while the team's row is locked).
 */
export async function settingsAtCreation(
  input: MethodCreateInput,
): Promise<Partial<Record<VerificationMethod, Record<string, unknown>>>> {
  const settings: Partial<Record<VerificationMethod, Record<string, unknown>>> = {};
  for (const [method, { settings: make }] of Object.entries(CREATION_INPUT)) {
    const made = await make(input);
    if (made) settings[method as VerificationMethod] = made;
  }
  return settings;
}
