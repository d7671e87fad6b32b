import { emailAddress, requiredText } from '@/server/platform/wire-fields';

/** The fields a case's creation sends with this method (the create body's, described). */
export const managerCreateFields = {
  manager_name: requiredText(200)
    .meta({
      description: 'With `manager`: the name of the manager who confirms the subject.',
      examples: ['Mia Manager'],
    })
    .optional(),
  manager_email: emailAddress.optional().meta({
    description:
      'With `manager`: where the manager’s request is mailed; confirming passes the step, declining fails the case.',
    examples: ['mia.manager@acme.example'],
  }),
};

/** The step's settings at creation: whom to ask. */
export async function managerSettings(input: {
  manager_name?: string;
  manager_email?: string;
}): Promise<Record<string, unknown> | undefined> {
  if (input.manager_name === undefined || input.manager_email === undefined) return undefined;
  return { manager_name: input.manager_name, manager_email: input.manager_email };
}
