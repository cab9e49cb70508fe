/** Hashes of a file (PrepareConfig.hashTypes, RenderConfig.exportHashes) in one streaming pass. */
import { createHash, type Hash } from "node:crypto";
import { createReadStream } from "node:fs";
import { ObscuraError } from "@/lib/errors";
import { HASH_TYPES, type HashType } from "@/lib/api/common";

export { HASH_TYPES, type HashType };

/** Returns `{ [type]: lowercase hex }` for each requested type (duplicates collapse). */
export async function hashFile(file: string, types: HashType[], opts: { signal?: AbortSignal } = {}): Promise<Record<string, string>> {
  for (const t of types) {
    if (!(HASH_TYPES as readonly string[]).includes(t)) {
      throw new ObscuraError("INVALID_ARGUMENT", `hash type must be one of ${HASH_TYPES.join(", ")}, not "${t}"`);
    }
  }
  const hashes = new Map<string, Hash>([...new Set(types)].map((t) => [t, createHash(t)]));
  if (opts.signal?.aborted) throw new ObscuraError("CANCELLED", "hashing was cancelled");
  try {
    for await (const chunk of createReadStream(file, { signal: opts.signal, highWaterMark: 1 << 20 })) {
      for (const h of hashes.values()) h.update(chunk as Buffer);
    }
  } catch (cause) {
    const e = cause as NodeJS.ErrnoException;
    if (e.name === "AbortError") throw new ObscuraError("CANCELLED", "hashing was cancelled", { cause });
    if (e.code === "ENOENT") throw new ObscuraError("INVALID_ARGUMENT", "cannot hash the input: no such file", { cause });
    throw new ObscuraError("INTERNAL", `cannot hash the input: ${e.code ?? e.message}`, { cause });
  }
  return Object.fromEntries([...hashes].map(([t, h]) => [t, h.digest("hex")]));
}
