#!/usr/bin/env bash
# Builds a demo registry from the sample data shipped in testdata/ (scripts/demo-registry.sh) and
# serves it on http://127.0.0.1:8000 (override with PORT=... and HOST=...). The sample files are
# copied into demo/PORT/ first, so that indexes the loader creates never land in testdata/, and so
# that a demo started on another port never touches the files of one that is running.
set -euo pipefail
cd "$(dirname "$0")/.."
ga4gh() { node bin/ga4gh "$@"; }

HOST=${HOST:-127.0.0.1}
PORT=${PORT:-8000}
# Refuse before anything is deleted when the port is taken (a demo may be running there).
if ! node -e '
  const server = require("node:net").createServer();
  server.once("error", () => process.exit(1));
  server.listen(Number(process.argv[2]), process.argv[1], () => server.close());
' "$HOST" "$PORT"; then
  echo "demo: $HOST:$PORT is already in use (a demo running there keeps its files); pick another port: PORT=8001 npm run demo" >&2
  exit 1
fi

DEMO=demo/$PORT
REGISTRY=$DEMO/registry.sqlite
rm -rf "$DEMO"
bash scripts/demo-registry.sh "$DEMO"
ga4gh repo list "$REGISTRY"
exec node bin/ga4gh serve "$REGISTRY" --host "$HOST" --port "$PORT" "$@"
