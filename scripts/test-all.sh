#!/usr/bin/env bash
# Every check and every test, as CI runs them: types, lint, a production build, then three test
# stages: vitest unit and domain tests on the embedded PostgreSQL 18, the domain and black-box
# integration suites on a throwaway PostgreSQL 15 cluster, and the browser tests. A failing check
# stops the run; the test stages all run, and the summary names each one with its failures.
#
# The PostgreSQL 15 pass never touches a server that already runs on this machine: it creates a
# cluster of its own in a temporary directory with the machine's PostgreSQL 15 programs
# (/usr/lib/postgresql/15/bin), on a free port, and deletes it afterwards. Where they are not
# installed the black-box suite runs on the embedded 18 with a notice, except under CI (CI=1),
# where that is a failure: "PostgreSQL 15 or newer" must be tested on every CI run.
set -euo pipefail
cd "$(dirname "$0")/.."

export NEXT_DIST_DIR="${NEXT_DIST_DIR:-.next}"
results=.test-results
rm -rf "$results" && mkdir -p "$results"

# Under CI the checkout is a fresh clone: no step may leave a tracked file changed.
unchanged_by() {
  if [ -n "${CI:-}" ]; then bash scripts/tracked-files-unchanged.sh "$1"; fi
}

# Each stage's wall time, printed with the summary: where a run's minutes go (CI's budget is 20).
stage_times=()
took() { stage_times+=("$(printf '%5d s  %s' $((SECONDS - $1)) "$2")"); }

echo "== type-check" && next typegen && tsc --noEmit
echo "== lint and format" && biome check .
# The build as a newcomer's `npm run build`, which must not announce telemetry (it is off in every
# script, the launcher and the image: a service holding identity data sends nothing to third parties).
echo "== build"
npm run -s build 2>&1 | tee "$results/build.log"
if grep -qi "telemetry" "$results/build.log"; then
  echo "the build announced telemetry: set NEXT_TELEMETRY_DISABLED=1 where it runs" >&2
  exit 1
fi
unchanged_by "the type-check or the build"
took 0 "type-check, lint and build"

failed_stages=()
stage() {
  local name="$1"
  shift
  echo "== $name"
  local started=$SECONDS
  if ! "$@"; then failed_stages+=("$name"); fi
  took "$started" "$name"
}

# Stage 1: unit tests and the business rules in-process (the domain project) on the embedded
# PostgreSQL 18, the server `npm start` runs.
stage "vitest unit + domain (embedded PostgreSQL 18)" \
  vitest run --project unit --project domain --reporter=default --reporter=json \
  --outputFile.json="$results/1-vitest-embedded-pg18.json"

# Stage 2: the oldest supported server, PostgreSQL 15, takes the domain project again and the
# black-box suite (the app over HTTP, its processes, the CLI). Running the black-box suite on one
# server, not on both, halves its cost; PostgreSQL 18 keeps the in-process rules and the browser
# tests. Without PostgreSQL 15 (a developer's machine) the black-box suite runs on the embedded 18.
PG15_BIN="${PG15_BIN:-/usr/lib/postgresql/15/bin}"
pg15_dir=""
stop_pg15() {
  if [ -n "$pg15_dir" ] && [ -d "$pg15_dir" ]; then
    as_postgres "$PG15_BIN/pg_ctl" -D "$pg15_dir/data" -m fast -w stop >/dev/null 2>&1 || true
    rm -rf "$pg15_dir"
  fi
}
trap stop_pg15 EXIT
# PostgreSQL refuses to run as root; CI runs as root, a developer usually does not.
as_postgres() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

second_stage="2-vitest-domain-integration-pg15.json=vitest domain + integration (PostgreSQL 15)"
pooler_stage=""

# Stage 4: the service behind PgBouncer in transaction pooling (Debian's `pgbouncer`), as managed
# PostgreSQL is usually reached: the pooler's own test, and the integration files of the core flows
# again with every app they start routed through a PgBouncer (VOUCH_TEST_POOLER, test/support/pgbouncer.ts),
# among them the scale-out test: six processes, 10,000 deliveries, at most the pooler's 20 server
# connections seen by PostgreSQL.
pooler_files=(
  test/pooler
  test/integration/cases-create.test.ts test/integration/cases-list.test.ts
  test/integration/cases-batch.test.ts test/integration/webhooks-delivery.test.ts
  test/integration/mail-outbox.test.ts test/integration/console-sign-in-links.test.ts
  test/integration/evidence-records.test.ts test/integration/oidc-provider.test.ts
  test/integration/expiry-events.test.ts test/integration/data-retention.test.ts
  test/integration/scale-out.test.ts
)
run_pooler_stage() {
  local server="$1"
  if [ -x /usr/sbin/pgbouncer ]; then
    pooler_stage="4-vitest-pgbouncer.json=vitest core flows through PgBouncer (transaction pooling, $server)"
    VOUCH_TEST_POOLER=transaction stage "vitest core flows through PgBouncer (transaction pooling, $server)" \
      vitest run --project pooler --project integration "${pooler_files[@]}" --reporter=default \
      --reporter=json --outputFile.json="$results/4-vitest-pgbouncer.json"
  elif [ -n "${CI:-}" ]; then
    echo "PgBouncer is not installed (/usr/sbin/pgbouncer): CI must test it (.ci/run installs pgbouncer)"
    failed_stages+=("PgBouncer missing")
  else
    echo "== PgBouncer is not installed (/usr/sbin/pgbouncer): the pooler stage is left out (CI runs it; apt install pgbouncer)"
  fi
}
# As many connections as the embedded server allows (db/embedded.ts): the scale-out test runs six
# of the service's processes at once beside the other files' apps.
if [ -x "$PG15_BIN/initdb" ]; then
  pg15_dir="$(mktemp -d /tmp/vouch-pg15-XXXXXX)"
  pg15_port="$(node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")"
  if [ "$(id -u)" = 0 ]; then chown postgres "$pg15_dir"; fi
  if as_postgres "$PG15_BIN/initdb" -D "$pg15_dir/data" -U postgres -A trust --no-sync >"$pg15_dir/initdb.log" 2>&1 &&
    as_postgres "$PG15_BIN/pg_ctl" -D "$pg15_dir/data" -l "$pg15_dir/server.log" -w \
      -o "-p $pg15_port -k $pg15_dir -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=300" start >/dev/null; then
    TEST_DATABASE_URL="postgres://postgres@127.0.0.1:$pg15_port/postgres" stage "vitest domain + integration (PostgreSQL 15)" \
      vitest run --project domain --project integration --reporter=default --reporter=json \
      --outputFile.json="$results/2-vitest-domain-integration-pg15.json"
    TEST_DATABASE_URL="postgres://postgres@127.0.0.1:$pg15_port/postgres" run_pooler_stage "PostgreSQL 15"
  else
    echo "PostgreSQL 15 could not start:" && cat "$pg15_dir"/*.log
    failed_stages+=("PostgreSQL 15 start")
  fi
  stop_pg15
elif [ -n "${CI:-}" ]; then
  echo "PostgreSQL 15 is not installed ($PG15_BIN): CI must test it (.ci/run installs postgresql-15)"
  failed_stages+=("PostgreSQL 15 missing")
else
  echo "== PostgreSQL 15 is not installed ($PG15_BIN): the integration suite runs on the embedded 18 (CI runs it on 15)"
  second_stage="2-vitest-integration-pg18.json=vitest integration (embedded PostgreSQL 18)"
  stage "vitest integration (embedded PostgreSQL 18)" \
    vitest run --project integration --reporter=default --reporter=json \
    --outputFile.json="$results/2-vitest-integration-pg18.json"
  run_pooler_stage "embedded PostgreSQL 18"
fi

# Stage 5: the container image, built from this checkout as CI builds it (Debian's buildah and
# mmdebstrap: only Debian's and npm's registries), then run as an orchestrator runs it.
image_stage=""
if command -v buildah >/dev/null 2>&1 && command -v mmdebstrap >/dev/null 2>&1; then
  image_stage="5-vitest-image.json=vitest container image"
  echo "== container image build"
  image_started=$SECONDS
  if bash scripts/build-image.sh localhost/vouch:test && took "$image_started" "container image build"; then
    VOUCH_TEST_IMAGE=localhost/vouch:test stage "vitest container image" \
      vitest run --project image --reporter=default --reporter=json --outputFile.json="$results/5-vitest-image.json"
  else
    failed_stages+=("container image build")
  fi
elif [ -n "${CI:-}" ]; then
  echo "buildah or mmdebstrap is not installed: CI must build and run the image (.ci/run installs them)"
  failed_stages+=("image tools missing")
else
  echo "== buildah or mmdebstrap is not installed: the image stage is left out (CI runs it; apt install buildah mmdebstrap)"
fi

PLAYWRIGHT_JSON_OUTPUT_NAME="$PWD/$results/3-playwright.json" stage "playwright (Chromium)" \
  playwright test -c e2e/playwright.config.ts --reporter=list,json

stage "tracked files unchanged by the tests" unchanged_by "the tests"

# The reports every stage that ran must have written; a missing one fails the summary.
summary_args=("$results" "1-vitest-embedded-pg18.json=vitest unit + domain (embedded PostgreSQL 18)")
summary_args+=("$second_stage")
if [ -n "$pooler_stage" ]; then summary_args+=("$pooler_stage"); fi
if [ -n "$image_stage" ]; then summary_args+=("$image_stage"); fi
summary_args+=("3-playwright.json=playwright (Chromium)")
summary_ok=0
node scripts/summarize-tests.mjs "${summary_args[@]}" || summary_ok=1
echo "== time per stage (the whole run: $SECONDS s)"
printf '%s\n' "${stage_times[@]}"
if [ "${#failed_stages[@]}" -gt 0 ]; then
  echo "failed stages: ${failed_stages[*]}"
  exit 1
fi
exit "$summary_ok"
