import type { Plugin } from 'esbuild';

/** How @trpc/server's build spells an object spread (see trpc-native-spread.mjs). */
export const SPREAD_HELPER: string;
/** `source` with its spread helper replaced by the language's spread, or null when it has none. */
export function withNativeSpread(source: string): string | null;
/** The esbuild plugin that gives @trpc/server's files the native helper. */
export function trpcNativeSpread(options: { required: boolean }): Plugin;
