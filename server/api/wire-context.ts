import type { WireContext } from '@/server/application/cases/wire';
import type { Clock } from '@/server/platform/clock';

/** A request's wire context for cases: its clock's time now, and where the subject's pages are. */
export function wireContext(ctx: { clock: Clock; pageBase: string }): WireContext {
  return { now: ctx.clock(), pageBase: ctx.pageBase };
}
