# syntax=docker/dockerfile:1
# Build stage: full install (dev tools) to typecheck; the runtime stage gets production dependencies only.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run typecheck

FROM node:24-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund

FROM node:24-bookworm-slim
ENV NODE_ENV=production LOG_FORMAT=json DATA_DIR=/data
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY bin ./bin
COPY src ./src
COPY sql ./sql
COPY schema ./schema
# the bundle the program runs from (bin/bundle.mjs), built now so the non-root user never needs to write /app
RUN node bin/account-sync.mjs --help > /dev/null \
  && mkdir -p /data && chown node:node /data && ln -s /app/bin/account-sync.mjs /usr/local/bin/account-sync
USER node
EXPOSE 8080
# node is PID 1's child only through this exec-form entrypoint: SIGTERM reaches node directly.
# glibc's malloc arenas and mmap threshold (see bin/account-sync.mjs): read at start, so environment variables of the image
ENV MALLOC_ARENA_MAX=2 MALLOC_MMAP_THRESHOLD_=131072
ENTRYPOINT ["node", "--max-semi-space-size=8", "--v8-pool-size=2", "--heap-growing-percent=30", "/app/bin/account-sync.mjs"]
CMD ["--help"]
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
