/**
 * negotiator 1.x ships no types, and @types/negotiator describes 0.6, which could not break a tie
 * in the client's preference by ours (`preferred`). Only what the web process uses.
 */
declare module 'negotiator' {
  export default class Negotiator {
    constructor(request: { headers: Record<string, string | string[] | undefined> });
    /**
     * The encodings of `available` the client accepts, the one it prefers first; among those it
     * likes equally, the first in `preferred`.
     */
    encodings(available: readonly string[], options?: { preferred?: readonly string[] }): string[];
    /** The languages of `Accept-Language`, most wanted first, without those refused (q=0). */
    languages(): string[];
  }
}
