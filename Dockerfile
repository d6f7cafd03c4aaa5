# notify-mcp over Streamable HTTP on 0.0.0.0:8787. Binding beyond loopback needs tokens, so
# the container refuses to start until NOTIFY_HTTP_TOKENS is set (see README, "Docker").
#   docker build -t notify-mcp .
#   docker run --rm -p 127.0.0.1:8787:8787 -e NOTIFY_HTTP_TOKENS=me:<16+ chars> notify-mcp
# Stages: build (every dependency, then dist/), deps (production dependencies only, from the
# lockfile), runtime (slim image, non-root). test/project/dockerfile.test.ts replays deps and runtime.
# packages/union is an npm workspace: each install needs its package.json where the lockfile
# says, and the image keeps the built package its node_modules link points to.

# --- build: dev tools and the compiled dist/ ---
FROM node:20-bookworm AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages/union/package.json ./packages/union/
# Scripts off: `prepare` would build before the sources are here, and the build needs no
# native module.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json rolldown.config.mjs ./
COPY scripts ./scripts
COPY packages/union ./packages/union
COPY src ./src
COPY examples ./examples
RUN npm run build

# --- deps: production dependencies only ---
FROM node:20-bookworm AS deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages/union/package.json ./packages/union/
# `--ignore-scripts` skips our own `prepare` (a build, with tools --omit=dev leaves out); the
# one dependency with an install script, better-sqlite3, then gets it: a prebuilt binary, or
# a compile with the toolchain this full image has.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm rebuild better-sqlite3

# --- runtime ---
FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production NOTIFY_DATA_DIR=/data NOTIFY_LOG_LEVEL=info
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/packages/union/dist ./packages/union/dist
COPY package.json LICENSE README.md .env.example ./
COPY packages/union/package.json ./packages/union/
# The image's files stay root's and read-only to the server; it writes only its data dir
# (SQLite when DATABASE_URL is unset).
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8787
# /healthz needs no token (unless NOTIFY_READ_AUTH=1: then override this check). The slim
# image has no curl: Node's fetch does it.
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:8787/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "dist/cli.js", "--http", "--host", "0.0.0.0", "--port", "8787"]
