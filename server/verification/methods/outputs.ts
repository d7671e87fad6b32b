import { z } from 'zod';
import type { VerificationMethod } from '@/db/schema';
import { customQuestionOutput } from './custom-question/output';
import { emailOutput } from './email/output';
import { governmentIdOutput } from './government-id/output';
import { managerOutput } from './manager/output';
import type { MethodOutput } from './output';
import { METHODS } from './registry';
import { selfieOutput } from './selfie/output';
import { smsOutput } from './sms/output';

/** Each method's part of a Case (its folder's `output.ts`). */
const METHOD_OUTPUTS = {
  email: emailOutput,
  sms: smsOutput,
  government_id: governmentIdOutput,
  selfie: selfieOutput,
  custom_question: customQuestionOutput,
  manager: managerOutput,
} satisfies Record<VerificationMethod, MethodOutput>;

type Outputs = typeof METHOD_OUTPUTS;

const methodState = {
  requested: z.boolean().meta({ description: 'Whether the case asked for this step.', examples: [true] }),
  verified: z.boolean().meta({ description: 'Whether the subject has passed this step.', examples: [false] }),
};

function nulls(output: MethodOutput): Record<string, null> {
  return Object.fromEntries(Object.keys(output.fields).map((field) => [field, null]));
}

/** The example case's methods: it asked for the first two and passed the first. */
export const EXAMPLE_VERIFICATION_METHODS = Object.fromEntries(
  METHODS.map(({ key }, index) => [
    key,
    { requested: index < 2, verified: index === 0, ...nulls(METHOD_OUTPUTS[key]) },
  ]),
);

/** The schema of a Case's `verification_methods`: every method, in the registry's order. */
export const verificationMethodsOutput = z
  .object(
    Object.fromEntries(
      METHODS.map(({ key }) => {
        const output: MethodOutput = METHOD_OUTPUTS[key];
        return [
          key,
          z.object({ ...methodState, ...output.fields }).meta({
            description: output.description,
            examples: [{ requested: true, verified: false, ...output.example }],
          }),
        ];
      }),
    ) as {
      [K in keyof Outputs]: Outputs[K] extends MethodOutput<infer F extends z.ZodRawShape>
        ? z.ZodObject<typeof methodState & F>
        : never;
    },
  )
  .meta({
    description: 'Every method, each with whether it was requested and whether it passed.',
    examples: [EXAMPLE_VERIFICATION_METHODS],
  });

export type VerificationMethodsWire = z.infer<typeof verificationMethodsOutput>;

/** A case's `verification_methods`, read from its steps. */
export function verificationMethodsWire(
  steps: ReadonlyArray<{ method: VerificationMethod; state: string; settings: Record<string, unknown> }>,
): VerificationMethodsWire {
  return Object.fromEntries(
    METHODS.map(({ key }) => {
      const step = steps.find((s) => s.method === key);
      const output: MethodOutput = METHOD_OUTPUTS[key];
      return [
        key,
        {
          requested: step !== undefined,
          verified: step?.state === 'verified',
          ...output.read(step?.settings ?? null),
        },
      ];
    }),
  ) as VerificationMethodsWire;
}
