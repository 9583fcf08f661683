# syntax=docker/dockerfile:1
# Ferry (飞渡) container image: a build stage that compiles the single executable, and a slim
# Debian runtime that holds only that executable.
#
#   docker build -t ferry .
#   docker run -d --name ferry -p 3000:3000 -v ferry-data:/data ferry
#   docker exec -it ferry ferry user create --email admin@example.com --role admin   # asks for the password
#
# The executable is the one the tests use: `bun run build` is scripts/build.ts, which
# tests/e2e/dist.test.ts also runs. `docker stop` sends SIGTERM and waits 10 s: ferry finishes the
# requests in flight, checkpoints the database and exits within that. Scheduled backups (setting
# backup_hour) land in /data/backups, inside the volume.

ARG BUN_VERSION=1.4.5

# ---- build: SPA bundle + bun build --compile → /app/dist/ferry ------------------------------
FROM oven/bun:${BUN_VERSION} AS build
WORKDIR /app
# Dependencies first, so a source change does not reinstall them.
COPY package.json bun.lock ./
RUN bun install --frozen-lockfile
COPY . .
RUN bun run build && ./dist/ferry --version

# ---- runtime: glibc + the executable, nothing else -----------------------------------------
FROM debian:bookworm-slim
# A fixed non-root uid/gid so volume ownership is predictable across rebuilds.
RUN groupadd --system --gid 10001 ferry \
 && useradd --system --uid 10001 --gid ferry --home-dir /data --no-create-home --shell /usr/sbin/nologin ferry \
 && mkdir -p /data \
 && chown ferry:ferry /data
COPY --from=build --chown=root:root --chmod=0755 /app/dist/ferry /usr/local/bin/ferry
# `docker exec … ferry user create` and friends find the same database as the server.
ENV FERRY_DATA=/data
WORKDIR /data
USER ferry
VOLUME /data
EXPOSE 3000
STOPSIGNAL SIGTERM
# The executable checks itself: BUN_BE_BUN=1 makes a Bun-compiled program act as the bun CLI,
# so no curl/wget is needed in the image.
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
  CMD ["env", "BUN_BE_BUN=1", "ferry", "-e", "const r = await fetch('http://127.0.0.1:3000/healthz', { signal: AbortSignal.timeout(4000) }).catch(() => null); process.exit(r?.status === 200 ? 0 : 1)"]
# ferry listens on 127.0.0.1 by default; in a container it must listen on all addresses for -p to
# reach it. Behind a reverse proxy, add "--trust-proxy", "<the proxy's address or network>".
CMD ["ferry", "serve", "--data", "/data", "--host", "0.0.0.0", "--port", "3000"]
