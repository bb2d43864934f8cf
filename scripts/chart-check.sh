#!/usr/bin/env bash
# The chart check (CI runs it before `npm test`): builds helm and kubeconform from the Go module proxy if needed
# (scripts/chart-tools.sh), then `helm lint` and `helm template` of helm/muninn for the default values, the HA
# example and the optional components switched on, each validated by kubeconform -strict against the
# Kubernetes schemas made from the k8s.io/kubernetes module (see the README, "Deploying with Helm").
# Negative checks prove each gate can fail. Exits non-zero on the first failure.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS

bash scripts/chart-tools.sh
K8S_VERSION=$(sed -n 's/^K8S_VERSION=//p' scripts/chart-tools.sh)
SCHEMAS="$PWD/.tools/schemas/$K8S_VERSION"
CHART=helm/muninn
# Helm keeps its config, cache and data under .tools: nothing in $HOME, no repositories consulted.
export HELM_CONFIG_HOME="$PWD/.tools/helm/config" HELM_CACHE_HOME="$PWD/.tools/helm/cache" \
  HELM_DATA_HOME="$PWD/.tools/helm/data"
helm() { "$PWD/.tools/bin/helm" "$@"; }

# ServiceMonitor is a CRD (monitoring.coreos.com/v1) with no upstream Kubernetes schema: skipped, by name only.
validate() {
  "$PWD/.tools/bin/kubeconform" -strict -summary \
    -schema-location "$SCHEMAS/{{ .ResourceKind }}{{ .KindSuffix }}.json" -skip ServiceMonitor -
}
render() { helm template muninn "$CHART" --namespace muninn --kube-version "${K8S_VERSION#v}" "$@"; }

echo "== helm lint"
helm lint --strict "$CHART"
helm lint --strict "$CHART" -f "$CHART/values-ha.yaml"

echo "== helm template | kubeconform: default values"
render | validate
echo "== helm template | kubeconform: HA values (handoff, MCP, ServiceMonitor on)"
render -f "$CHART/values-ha.yaml" | validate
echo "== helm template | kubeconform: handoff and MCP on, no autoscaling, chart-made PVC off"
render --set handoff.enabled=true --set mcp.enabled=true --set mcp.audience=https://mcp.example.com/mcp \
  --set mcp.exchangeUrl=https://idp.example.com/token --set secrets.mcpClientSecret="$(printf 'x%.0s' {1..32})" \
  --set api.autoscaling.enabled=false --set keyStore.persistence.existingClaim=muninn-keys \
  --set metrics.serviceMonitor.enabled=true | validate

# Kafka TLS + SASL and a private Bolt CA: the CA Secrets mounted, the password in the Secret.
TLS_VALUES=(--set neo4j.uri=neo4j://neo4j:7687 --set neo4j.caSecret=neo4j-ca --set kafka.tls.enabled=true
  --set kafka.tls.caSecret=kafka-ca --set kafka.sasl.mechanism=scram-sha-512 --set kafka.sasl.username=muninn
  --set kafka.sasl.password=not-a-real-password)
echo "== helm template | kubeconform: Kafka TLS + SASL, Bolt with a private CA"
render "${TLS_VALUES[@]}" | validate

# The rendered ConfigMap + Secret through the service's own config loader (src/config/index.ts), per role: the
# defaults must satisfy MUNINN_ENV=production. Needs `npm ci` (tsx, zod); CI runs this after it.
env_check() { render "$@" | node --import tsx scripts/chart-env-check.ts; }
if [[ -d node_modules/tsx ]]; then
  echo "== rendered environment | config loader: default values"
  env_check
  echo "== rendered environment | config loader: Kafka TLS + SASL, Bolt with a private CA"
  env_check "${TLS_VALUES[@]}"
else
  echo "== rendered environment | config loader: not run (no node_modules: run npm ci first)"
fi

# expect_fail <what> <pattern> <command…>: the command must fail and say <pattern>.
expect_fail() {
  local what=$1 pattern=$2 out
  shift 2
  if out=$("$@" 2>&1); then
    echo "negative check FAILED: $what was accepted" >&2
    exit 1
  fi
  grep -q -- "$pattern" <<<"$out" || { echo "negative check FAILED: $what failed without \"$pattern\":" >&2; echo "$out" >&2; exit 1; }
  echo "ok (refused as expected): $what"
}

echo "== negative checks"
expect_fail "projector.replicas > kafka.partitions" "must not exceed kafka.partitions" \
  render --set kafka.partitions=4 --set projector.replicas=5
expect_fail "an http:// Neo4j URI (values.schema.json)" "/neo4j/uri.*does not match pattern" \
  render --set neo4j.uri=http://neo4j:7474
expect_fail "MCP on without its audience" "mcp.audience is required" render --set mcp.enabled=true
expect_fail "an unknown SASL mechanism (values.schema.json)" "/kafka/sasl/mechanism" \
  render --set kafka.sasl.mechanism=gssapi
if [[ -d node_modules/tsx ]]; then
  expect_fail "an env the config loader refuses (JWKS URL and file both set)" "not both" \
    env_check --set config.MUNINN_AUTH_JWKS_FILE=/etc/jwks.json
  expect_fail "a SASL mechanism without its password (config loader)" "needs KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD" \
    env_check --set kafka.sasl.mechanism=scram-sha-256 --set kafka.sasl.username=muninn
  expect_fail "a Bolt CA beside a neo4j+s:// URI (config loader)" "NEO4J_URI is bolt:// or neo4j://" \
    env_check --set neo4j.caSecret=neo4j-ca
fi
bad_deployment() {
  render | sed '0,/^  replicas:/s//  replicaz: 2\n  replicas:/' | validate
}
expect_fail "a Deployment with an unknown field (kubeconform -strict)" "replicaz" bad_deployment

echo "chart check: passed in $((SECONDS - start)) s"
