/**
 * The one source of "now" for business rules. Domain functions take a `Clock` so tests can pin
 * time; production code passes `systemClock`.
 */
export type Clock = () => Date;

export const systemClock: Clock = () => new Date();
