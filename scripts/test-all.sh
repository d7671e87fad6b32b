#!/usr/bin/env bash
# Every check and every test, as CI runs them: types, lint, a production build, the vitest unit
# and integration suites on the embedded PostgreSQL 18, the integration suite again on the
# system PostgreSQL when one answers on 127.0.0.1:5432, then the browser tests.
set -euo pipefail
cd "$(dirname "$0")/.."

export NEXT_DIST_DIR="${NEXT_DIST_DIR:-.next}"
results=.test-results
rm -rf "$results" && mkdir -p "$results"

echo "== type-check" && tsc --noEmit
echo "== lint and format" && biome check .
echo "== build" && next build

echo "== vitest (embedded PostgreSQL)"
vitest run --reporter=default --reporter=json --outputFile.json="$results/vitest-embedded.json"

if node -e "require('net').connect(5432,'127.0.0.1').on('connect',()=>process.exit(0)).on('error',()=>process.exit(1))"; then
  echo "== vitest integration (system PostgreSQL on 127.0.0.1:5432)"
  TEST_DATABASE_URL="${TEST_SYSTEM_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres}" \
    vitest run --project integration --reporter=default --reporter=json \
    --outputFile.json="$results/vitest-system-pg.json"
else
  echo "== no PostgreSQL on 127.0.0.1:5432: skipping the second integration run"
fi

if [ -f e2e/playwright.config.ts ]; then
  echo "== playwright (Chromium)"
  PLAYWRIGHT_JSON_OUTPUT_NAME="$PWD/$results/playwright.json" playwright test -c e2e/playwright.config.ts --reporter=list,json
fi

node scripts/summarize-tests.mjs "$results"
