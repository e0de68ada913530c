#!/usr/bin/env bash
# Builds a demo registry from the sample data shipped in testdata/ and serves it on
# http://127.0.0.1:8000 (override with PORT=...). The sample files are copied into demo/ first,
# so that indexes the loader creates never land in testdata/.
set -euo pipefail
cd "$(dirname "$0")/.."
ga4gh() { node bin/ga4gh "$@"; }

DEMO=demo
REGISTRY=$DEMO/registry.sqlite
rm -rf "$DEMO"
mkdir -p "$DEMO"
cp -r testdata/ga4gh-server testdata/compliance "$DEMO"/
chmod -R u+w "$DEMO"
D=$DEMO/ga4gh-server

ga4gh repo init "$REGISTRY"
ga4gh repo add-dataset "$REGISTRY" demo --description "Sample data of the GA4GH reference server and compliance suite"

# Reference sets
ga4gh repo add-referenceset "$REGISTRY" "$D/referenceSets/NCBI37.fa.gz" --assembly-id NCBI37 \
  --species-term-id NCBITaxon:9606 --species-term "Homo sapiens" --description "Excerpt of NCBI37"
ga4gh repo add-referenceset "$REGISTRY" "$D/referenceSets/Default.fa.gz"
ga4gh repo add-referenceset "$REGISTRY" "$D/referenceSets/example_1.fa.gz"
ga4gh repo add-referenceset "$REGISTRY" "$D/referenceSets/example_2.fa.gz"
ga4gh repo add-referenceset "$REGISTRY" "$DEMO/compliance/ref_brca1.fa" --name hg37 --assembly-id hg37 \
  --species-term-id NCBITaxon:9606 --species-term "Homo sapiens" --is-derived --source-accessions GA4GH_CTS_01 \
  --description "An artificial reference for use with compliance data, derived from GRCh37"

ga4gh repo list "$REGISTRY"
exec node bin/ga4gh serve "$REGISTRY" --host "${HOST:-127.0.0.1}" --port "${PORT:-8000}" "$@"
