#!/usr/bin/env bash
# `npm run test:mutation`: StrykerJS (stryker.config.mjs) with one PostgreSQL for all its workers.
# Stryker runs the tests in sandbox copies of the checkout, which the embedded server (run as the
# OS user `postgres` under root) cannot enter; so the server is started here, from the checkout,
# as a test run's global setup starts it, and every worker's tests use it (TEST_DATABASE_URL),
# each worker with its own template and databases.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -z "${TEST_DATABASE_URL:-}" ]; then
  mkdir -p .test-data
  coproc SERVER { exec node --import tsx test/setup/database-server.ts; }
  server_pid=$SERVER_PID
  stop_server() {
    kill -TERM "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  }
  trap stop_server EXIT
  read -r ready <&"${SERVER[0]}"
  TEST_DATABASE_URL="$(node -e 'console.log(JSON.parse(process.argv[1]).adminUrl)' "$ready")"
  export TEST_DATABASE_URL
fi
npx stryker run "$@"
