# Obscura server image: the same two steps as the README (npm ci, npm start).
# Not built in this project's CI (no Docker engine there); kept minimal on purpose.
FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production NEXT_TELEMETRY_DISABLED=1 ONNXRUNTIME_NODE_INSTALL=skip \
    OBSCURA_DATA_DIR=/data PORT=9000
COPY package.json package-lock.json .npmrc ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npx next build
VOLUME /data
EXPOSE 9000
# `npm start` serves the app with in-process workers; `npm run worker` runs a worker alone.
CMD ["npm", "start"]
