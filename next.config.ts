import type { NextConfig } from "next";

const nextConfig: NextConfig = {
  // Native, WASM or binary-carrying packages stay as plain Node requires.
  serverExternalPackages: [
    "@electric-sql/pglite",
    "pg",
    "pg-boss",
    "sharp",
    "@ffmpeg-installer/ffmpeg",
    "@ffprobe-installer/ffprobe",
    "@aws-sdk/client-s3",
    "@aws-sdk/lib-storage",
    "@azure/storage-blob",
    "undici",
    "onnxruntime-node",
    "sherpa-onnx-node",
    "@node-rs/argon2",
  ],
  poweredByHeader: false,
  typescript: { ignoreBuildErrors: false },
};

export default nextConfig;
