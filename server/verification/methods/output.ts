import type { z } from 'zod';

/**
 * A method's part of a Case's `verification_methods`: beside `requested` and `verified` (which
 * every method has), the fields it shows, described and exemplified for the OpenAPI document, and
 * how they are read from its step's settings (null when the step was not requested).
 */
export interface MethodOutput<Fields extends z.ZodRawShape = z.ZodRawShape> {
  description: string;
  fields: Fields;
  example: Record<string, unknown>;
  read: (settings: Record<string, unknown> | null) => { [K in keyof Fields]: z.infer<Fields[K]> };
}

/** A string setting, or null (not set, not a string, or no step). */
export function stringSetting(settings: Record<string, unknown> | null, key: string): string | null {
  const value = settings?.[key];
  return typeof value === 'string' ? value : null;
}

/** The output of a method that shows nothing beyond requested and verified. */
export function stateOnly(description: string): MethodOutput<Record<never, never>> {
  return { description, fields: {}, example: {}, read: () => ({}) };
}
