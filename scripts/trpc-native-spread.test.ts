import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { build } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';
import { SPREAD_HELPER, trpcNativeSpread, withNativeSpread } from './trpc-native-spread.mjs';

const root = path.resolve(import.meta.dirname, '..');
const scratch = mkdtempSync(path.join(tmpdir(), 'trpc-spread-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/**
 * A router whose middlewares pass on contexts and inputs as a caller's would: a context parsed from
 * JSON with a `__proto__` key, a symbol key, a key a later layer overrides, a null context.
 */
const PROBE = `
import { initTRPC } from '@trpc/server';
const t = initTRPC.context().create();
const marker = Symbol('marker');
const procedure = t.procedure
  .use(({ next }) => next({ ctx: JSON.parse('{"__proto__": {"polluted": true}, "team": "a", "mode": "live"}') }))
  .use(({ next }) => next({ ctx: { [marker]: 'kept', mode: 'test' } }))
  .use(({ next }) => next({ ctx: null }))
  .use(({ next }) => next());
const router = t.router({
  probe: procedure.input((value) => value).query(({ ctx, input }) => ({
    own: Object.getOwnPropertyNames(ctx).sort(),
    ownProto: Object.getOwnPropertyDescriptor(ctx, '__proto__')?.value ?? null,
    prototypeIsObject: Object.getPrototypeOf(ctx) === Object.prototype,
    polluted: ctx.polluted ?? null,
    marker: ctx[marker] ?? null,
    mode: ctx.mode,
    input,
  })),
});
const caller = t.createCallerFactory(router)({ base: 1 });
process.stdout.write(JSON.stringify(await caller.probe({ n: 1 })));
`;

/** The probe bundled as the processes are, with or without the plugin; its output and the bundle. */
async function probe(native: boolean): Promise<{ output: unknown; bundle: string }> {
  const result = await build({
    // Resolved from the project, so that @trpc/server comes from its node_modules.
    stdin: { contents: PROBE, resolveDir: root, loader: 'js' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    write: false,
    logLevel: 'silent',
    plugins: native ? [trpcNativeSpread({ required: true })] : [],
  });
  const bundle = result.outputFiles[0]?.text ?? '';
  const file = path.join(scratch, `probe-${native}.mjs`);
  writeFileSync(file, bundle);
  return { output: JSON.parse(execFileSync(process.execPath, [file], { encoding: 'utf8' })), bundle };
}

describe("tRPC's object spreads, as the language's own", () => {
  it('finds the helper @trpc/server ships in exactly one of its files', () => {
    const dist = path.join(root, 'node_modules', '@trpc', 'server', 'dist');
    const files = readdirSync(dist).filter((name) => name.endsWith('.mjs'));
    const withHelper = files.filter((name) =>
      readFileSync(path.join(dist, name), 'utf8').includes(SPREAD_HELPER),
    );
    expect(withHelper).toHaveLength(1);
    const rewritten = withNativeSpread(readFileSync(path.join(dist, withHelper[0] as string), 'utf8'));
    expect(rewritten).toContain('let copy = { ...e, ...a, ...b };');
    expect(withNativeSpread('const a = 1;')).toBeNull();
  });

  it("gives the procedures what tRPC's own helper gives them, a parsed __proto__ key included", async () => {
    const shipped = await probe(false);
    const native = await probe(true);
    expect(shipped.bundle).not.toContain('let copy = { ...e');
    expect(native.bundle).toContain('let copy = { ...e');
    expect(native.output).toEqual(shipped.output);
    // What both give: the parsed key is a property of the context, never its prototype.
    expect(native.output).toMatchObject({
      ownProto: { polluted: true },
      prototypeIsObject: true,
      polluted: null,
      marker: 'kept',
      mode: 'test',
      input: { n: 1 },
    });
  });

  it('fails a build that requires it when no file has the helper', async () => {
    await expect(
      build({
        stdin: { contents: 'export const a = { ...{ b: 1 } };', loader: 'js' },
        write: false,
        logLevel: 'silent',
        plugins: [trpcNativeSpread({ required: true })],
      }),
    ).rejects.toThrow(/no @trpc\/server file had/);
  });
});
