/** Throws when a built script has a character outside ASCII (see ascii-scripts.mjs). */
export function assertAscii(name: string, text: string): void;
