import type { VerificationMethod } from '@/db/schema';
import { METHOD_MODULES } from './modules';
import type { PageSection } from './page-section';

/**
 * The sections of the case's steps, in the registry's order (each module's `pageSection`; the
 * selfie has none of its own: it is taken, and shown, with the government ID it passes with).
 */
export function pageSectionsOf(
  methods: readonly VerificationMethod[],
): Array<[VerificationMethod, PageSection]> {
  return METHOD_MODULES.flatMap(({ definition: { key }, pageSection }) =>
    pageSection && methods.includes(key) ? [[key, pageSection] as [VerificationMethod, PageSection]] : [],
  );
}
