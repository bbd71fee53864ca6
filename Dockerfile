# syntax=docker/dockerfile:1
# One image for every Linkplane process: the first argument picks it (api, redirect, worker, all-in-one),
# so a release builds, scans and pulls a single artifact. Build: `make image`.

# The same pinned Node.js as tools/node24 (24.21.0), in build and runtime, so the compiled output and the
# production node_modules run on exactly the runtime they were installed with.
FROM node:24.21.0-bookworm-slim AS build
WORKDIR /app

# Dependencies first: this layer is rebuilt only when the lockfile changes, not on every source edit.
COPY package.json package-lock.json .npmrc ./
RUN --mount=type=cache,target=/root/.npm npm ci --no-audit --no-fund

# The whole context (.dockerignore drops tests, benchmarks, local builds and data); tsconfig.build.json
# decides what compiles, so source folders added later need no change here.
COPY . .
# tsc emits dist/ (entry: dist/src/main/run.js) and Vite the dashboard into web/dist/; dev dependencies
# (TypeScript, Vite, test tools, helm) then go.
RUN npm run build && npm run build:web && npm prune --omit=dev \
 && rm node_modules/@ip-location-db/geo-whois-asn-country-mmdb/geo-whois-asn-country-ipv4.mmdb \
       node_modules/@ip-location-db/geo-whois-asn-country-mmdb/geo-whois-asn-country-ipv6.mmdb \
       node_modules/@ip-location-db/asn/asn-ipv4.csv node_modules/@ip-location-db/asn/asn-ipv6-num.csv
# The open geography data (docs/geography.md) ships with the production dependencies; the variants of its files
# the redirect does not read (split IPv4/IPv6 trees, the other CSV encodings) are dropped above, 28 MB less.

FROM node:24.21.0-bookworm-slim AS runtime
WORKDIR /app
# HOST: all-in-one binds 127.0.0.1 by default (a developer's machine); in a container it must listen on all
# interfaces to be reachable through published ports. The chart sets it as well.
ENV NODE_ENV=production HOST=0.0.0.0

# A dedicated unprivileged user whose uid matches the chart's runAsUser (Kubernetes checks runAsNonRoot
# against the numeric id). The application files stay owned by root: the process cannot modify its code.
# Only .data/ is writable: all-in-one keeps its development database there when no MONGODB_URI is given.
RUN groupadd --system --gid 10001 linkplane \
 && useradd --system --uid 10001 --gid linkplane --no-create-home --shell /usr/sbin/nologin linkplane \
 && mkdir /app/.data && chown 10001:10001 /app/.data

COPY --from=build /app/node_modules/ node_modules/
COPY --from=build /app/dist/ dist/
# The dashboard's static files, served by the api (DASHBOARD_DIR, default web/dist under the application root).
COPY --from=build /app/web/dist/ web/dist/
COPY package.json ./
COPY bin/ bin/

USER 10001:10001
# api, redirect, worker (health checks and metrics only).
EXPOSE 8080 8081 8082
# No HEALTHCHECK: Kubernetes probes /healthz and /readyz. Node runs as PID 1 without an init: the processes'
# own SIGTERM handlers do the graceful shutdown (SHUTDOWN_TIMEOUT_MS) that Kubernetes waits for.
ENTRYPOINT ["node", "dist/src/main/run.js"]
CMD ["all-in-one"]
