/**
 * Plate regions: which region (a US state, a European country...) a plate string fits, and the
 * plate string that region's formats make most likely (docs/vehicle-api.md#regions).
 *
 * A region group (`lptFilter`: `us`, `eu`, or one from `lptFilterDefinitions`) is a list of
 * regions, each with the character patterns of its plates and a prior (its share of the vehicles
 * one expects to see). Pattern syntax, one character position per token:
 *   `@` a letter, `#` a digit, `?` a letter or a digit, `A`-`Z` / `0`-`9` that character,
 *   `[ABC]` one of those characters. Anything else (spaces, dashes) is ignored: plates are read
 *   without separators.
 *
 * Scoring: the reader gives, per character, its most likely candidates with probabilities. For a
 * pattern of the string's length, each position takes its best candidate the pattern allows; the
 * pattern's likelihood is the product of those probabilities over the product of the unconstrained
 * best ones (1 when the reading already fits). A region's likelihood is that of its best pattern
 * times its prior; `region.score` is the region's share of the group's total (an honest posterior:
 * a string that fits twelve states equally gets at most about 1/12 unless the priors say more).
 * A string no pattern fits keeps its reading and gets the group's fallback region with score 0.
 * A group may write some characters as others (`normalize`: the us group writes O as 0).
 */
import fs from "node:fs";
import { z } from "zod";
import { ObscuraError } from "@/lib/errors";
import type { PlateChar } from "../vision/plate-read";

const LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const DIGITS = "0123456789";

export interface RegionDef {
  /** What `region.value` says, e.g. "US-CA", "DE". */
  name: string;
  patterns: string[];
  /** Relative weight (share of vehicles); default 1. */
  prior?: number;
}

export interface RegionGroup {
  /** The region reported when no pattern fits (e.g. "US"). */
  fallback: string;
  regions: RegionDef[];
  /**
   * Characters written as another in the reported string, after the patterns chose: the us group
   * writes the letter O as the digit 0, one glyph on most US plates (several states issue no O).
   */
  normalize?: Record<string, string>;
}

/** One pattern compiled: the set of characters allowed at each position. */
export type CompiledPattern = string[];

export function compilePattern(pattern: string): CompiledPattern {
  const out: string[] = [];
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!.toUpperCase();
    if (c === "@") out.push(LETTERS);
    else if (c === "#") out.push(DIGITS);
    else if (c === "?") out.push(LETTERS + DIGITS);
    else if (c === "[") {
      const end = pattern.indexOf("]", i);
      if (end < 0) throw new Error(`pattern ${JSON.stringify(pattern)}: "[" at ${i} has no closing "]"`);
      const set = pattern.slice(i + 1, end).toUpperCase();
      if (!set || /[^A-Z0-9]/.test(set)) throw new Error(`pattern ${JSON.stringify(pattern)}: a [...] set holds A-Z and 0-9 only`);
      out.push(set);
      i = end;
    } else if (/[A-Z0-9]/.test(c)) out.push(c);
    else if (c === "]") throw new Error(`pattern ${JSON.stringify(pattern)}: "]" at ${i} without "["`);
    // separators (space, dash, dot) are not read: skipped
  }
  if (!out.length) throw new Error(`pattern ${JSON.stringify(pattern)} has no character positions`);
  return out;
}

/** Smallest probability a character the reader did not list is given (it was not in its top candidates). */
const UNLISTED = 1e-4;

/**
 * Fits `chars` to one compiled pattern of the same length: the string and its log-likelihood
 * relative to the unconstrained reading (0 = already fits, more negative = more forcing).
 */
export function fitPattern(chars: readonly PlateChar[], pattern: CompiledPattern): { text: string; logRatio: number } | null {
  if (pattern.length !== chars.length) return null;
  let text = "";
  let logRatio = 0;
  for (let i = 0; i < chars.length; i++) {
    const ch = chars[i]!;
    const allowed = pattern[i]!;
    let pick: [string, number] | undefined = ch.alternatives.find(([c]) => allowed.includes(c));
    if (!pick && allowed.includes(ch.char)) pick = [ch.char, ch.confidence];
    if (!pick) pick = [allowed[0]!, UNLISTED];
    text += pick[0];
    logRatio += Math.log(Math.max(pick[1], UNLISTED)) - Math.log(Math.max(ch.confidence, UNLISTED));
  }
  return { text, logRatio };
}

export interface RegionChoice {
  /** The plate string: the best region's fitted reading, or the raw reading when nothing fits. */
  text: string;
  region: string;
  /** Posterior of `region` in the group (0 when nothing fits). */
  score: number;
  /** Whether a pattern of the region fitted. */
  matched: boolean;
}

export interface CompiledGroup {
  fallback: string;
  regions: Array<{ name: string; prior: number; patterns: CompiledPattern[] }>;
  normalize: Record<string, string>;
}

export function compileGroup(g: RegionGroup): CompiledGroup {
  const normalize = g.normalize ?? {};
  // A place that allows a character allows the ones written the same (O where 0 may stand, in us).
  const widen = (set: string) => {
    let out = set;
    for (const [from, to] of Object.entries(normalize)) {
      if (out.includes(from) && !out.includes(to)) out += to;
      if (out.includes(to) && !out.includes(from)) out += from;
    }
    return out;
  };
  return {
    fallback: g.fallback,
    regions: g.regions.map((r) => ({ name: r.name, prior: r.prior ?? 1, patterns: r.patterns.map((p) => compilePattern(p).map(widen)) })),
    normalize,
  };
}

const normalized = (text: string, map: Record<string, string>) => [...text].map((c) => map[c] ?? c).join("");

/**
 * Chooses the region and the string. A fit is accepted only when forcing the reading into the
 * pattern costs at most `maxForce` in log-likelihood (MAX_FORCE: the forced characters had at
 * least ~1/55 of the winners' probability), so a clear reading is never rewritten into a format
 * it is not. An unsure character (< DROP_BELOW) may be left out when that makes the reading fit.
 */
export function chooseRegion(chars: readonly PlateChar[], group: CompiledGroup, maxForce = MAX_FORCE): RegionChoice {
  const raw = chars.map((c) => c.char).join("");
  // The reading as it is, and without one unsure character (a bolt, a sticker, a stroke read twice)
  const readings: Array<{ chars: readonly PlateChar[]; cost: number }> = [{ chars, cost: 0 }];
  chars.forEach((c, i) => {
    if (c.confidence < DROP_BELOW) readings.push({ chars: chars.filter((_, j) => j !== i), cost: DROP_COST });
  });
  let total = 0;
  let best: { name: string; w: number; text: string } | null = null;
  for (const r of group.regions) {
    let top: { text: string; logRatio: number } | null = null;
    for (const p of r.patterns) {
      for (const h of readings) {
        const f = fitPattern(h.chars, p);
        if (!f) continue;
        const lr = f.logRatio - h.cost;
        if (lr >= -maxForce && (!top || lr > top.logRatio)) top = { text: f.text, logRatio: lr };
      }
    }
    if (!top) continue;
    const w = r.prior * Math.exp(top.logRatio);
    total += w;
    if (!best || w > best.w) best = { name: r.name, w, text: top.text };
  }
  if (!best || total <= 0) return { text: normalized(raw, group.normalize), region: group.fallback, score: 0, matched: false };
  return { text: normalized(best.text, group.normalize), region: best.name, score: best.w / total, matched: true };
}

/** Forcing a reading into a pattern may cost at most this much log-likelihood (about 1/55). */
export const MAX_FORCE = 4;
/** Characters read with less probability than this may be left out to fit a pattern... */
export const DROP_BELOW = 0.5;
/** ...at this cost in log-likelihood (a fit that needs no dropping is preferred). */
export const DROP_COST = 1.5;

/** Merges groups into one (the legacy `/v2/vehicle` path answers over both us and eu). */
export function unionGroups(fallback: string, ...groups: CompiledGroup[]): CompiledGroup {
  return { fallback, regions: groups.flatMap((g) => g.regions), normalize: {} };
}

// ---------------------------------------------------------------------------------------------
// Built-in groups. Patterns are the current standard passenger formats of each region (vanity and
// special plates are not covered); priors are approximate shares of registered vehicles.

const US: RegionGroup = {
  fallback: "US",
  normalize: { O: "0" },
  regions: [
    { name: "US-CA", prior: 11.5, patterns: ["#@@@###"] },
    { name: "US-TX", prior: 8.5, patterns: ["@@@####", "@@#-@###", "###-@@@"] },
    { name: "US-FL", prior: 6.5, patterns: ["@@@@##", "###-@@@", "@##-@@@", "@@@-@##", "###-#@@"] },
    { name: "US-NY", prior: 4.0, patterns: ["@@@-####", "@@@-###", "###-@@@"] },
    { name: "US-PA", prior: 3.6, patterns: ["@@@-####", "@@@-###"] },
    { name: "US-OH", prior: 3.4, patterns: ["@@@-####", "@@-####", "@@@-###"] },
    { name: "US-IL", prior: 3.3, patterns: ["@@-#####", "@-######", "@@#-####", "### ####"] },
    { name: "US-MI", prior: 2.9, patterns: ["@@@-####", "###-@@@", "#@@@##"] },
    { name: "US-GA", prior: 2.9, patterns: ["@@@-####", "@@@-###", "###-@@@"] },
    { name: "US-NC", prior: 2.8, patterns: ["@@@-####", "@@@-###"] },
    { name: "US-NJ", prior: 2.4, patterns: ["@##-@@@", "@@@-##@", "@@@##@"] },
    { name: "US-VA", prior: 2.6, patterns: ["@@@-####", "@@@-###", "###-@@@"] },
    { name: "US-WA", prior: 2.4, patterns: ["@@@####", "###-@@@", "@@@-###"] },
    { name: "US-AZ", prior: 2.0, patterns: ["@@@####", "###-@@@", "@@@-###"] },
    { name: "US-MA", prior: 1.7, patterns: ["#@@@##", "###-@@#", "#@@-###", "## @@##"] },
    { name: "US-TN", prior: 1.9, patterns: ["@@@-###", "###-@@@", "#@#-#@#", "@##-##@"] },
    { name: "US-IN", prior: 1.9, patterns: ["###@@@", "###@", "@@@###"] },
    { name: "US-MO", prior: 1.7, patterns: ["@@#-@#@", "@@@-###"] },
    { name: "US-MD", prior: 1.6, patterns: ["#@@####", "#@@###", "@@@###"] },
    { name: "US-WI", prior: 1.7, patterns: ["@@@-####", "###-@@@", "@@@-###"] },
    { name: "US-CO", prior: 1.7, patterns: ["@@@-@##", "###-@@@", "@@@-###"] },
    { name: "US-MN", prior: 1.7, patterns: ["###-@@@", "@@@-###"] },
    { name: "US-SC", prior: 1.5, patterns: ["@@@-###", "###-@@@"] },
    { name: "US-AL", prior: 1.6, patterns: ["#@@####", "##@@###", "#####@@"] },
    { name: "US-LA", prior: 1.3, patterns: ["###-@@@", "@@@-###"] },
    { name: "US-KY", prior: 1.3, patterns: ["###-@@@", "@@@-###"] },
    { name: "US-OR", prior: 1.2, patterns: ["###-@@@", "@@@-###", "###@@@"] },
    { name: "US-OK", prior: 1.1, patterns: ["@@@-###", "###-@@@"] },
    { name: "US-CT", prior: 1.0, patterns: ["@@-#####", "#-@@@@#", "###-@@@", "@@@-####"] },
    { name: "US-UT", prior: 0.9, patterns: ["@###@@", "###-@@@", "@##-#@@"] },
    { name: "US-IA", prior: 1.1, patterns: ["@@@-###", "###-@@@"] },
    { name: "US-NV", prior: 0.8, patterns: ["##@-###", "#@@-###", "###-@@@"] },
    { name: "US-AR", prior: 0.9, patterns: ["###-@@@", "@@@-##@"] },
    { name: "US-MS", prior: 0.8, patterns: ["@@@-####", "@@@-###"] },
    { name: "US-KS", prior: 0.8, patterns: ["###-@@@", "@@@-###"] },
    { name: "US-NM", prior: 0.6, patterns: ["@@@-###", "###-@@@", "@@@-####"] },
    { name: "US-NE", prior: 0.6, patterns: ["###-@@@", "@@@-###", "##-@####", "#-@####"] },
    { name: "US-ID", prior: 0.5, patterns: ["#@ #####", "#@ ####", "#@#####", "##@ ####"] },
    { name: "US-WV", prior: 0.5, patterns: ["#@@-###", "@@@-###", "### ###"] },
    { name: "US-HI", prior: 0.4, patterns: ["@@@-###"] },
    { name: "US-NH", prior: 0.4, patterns: ["###-####", "### ####", "@@@-###"] },
    { name: "US-ME", prior: 0.4, patterns: ["####-@@", "###-@@@"] },
    { name: "US-RI", prior: 0.3, patterns: ["@@-###", "###-###", "#@-###"] },
    { name: "US-MT", prior: 0.4, patterns: ["#-####@", "##-####@", "###-###@"] },
    { name: "US-DE", prior: 0.3, patterns: ["######", "#####", "@@######"] },
    { name: "US-SD", prior: 0.3, patterns: ["#@@-###", "##@-###"] },
    { name: "US-ND", prior: 0.3, patterns: ["###-@@@"] },
    { name: "US-AK", prior: 0.2, patterns: ["@@@ ###"] },
    { name: "US-DC", prior: 0.1, patterns: ["@@-####"] },
    { name: "US-VT", prior: 0.2, patterns: ["@@@ ###", "### @@@"] },
    { name: "US-WY", prior: 0.2, patterns: ["#-#####", "##-####", "#-####@", "##-###@"] },
  ],
};

const EU: RegionGroup = {
  fallback: "EU",
  regions: [
    { name: "DE", prior: 15, patterns: ["@ @ #", "@ @ ##", "@ @ ###", "@ @ ####", "@ @@ #", "@ @@ ##", "@ @@ ###", "@ @@ ####", "@@ @ #", "@@ @ ##", "@@ @ ###", "@@ @ ####", "@@ @@ #", "@@ @@ ##", "@@ @@ ###", "@@@ @ ##", "@@@ @ ###", "@@@ @@ ##", "@@@ @@ #"] },
    { name: "FR", prior: 12, patterns: ["@@-###-@@"] },
    { name: "IT", prior: 12, patterns: ["@@ ###@@"] },
    { name: "ES", prior: 8, patterns: ["#### @@@"] },
    { name: "GB", prior: 10, patterns: ["@@## @@@"] },
    { name: "PL", prior: 7, patterns: ["@@ #####", "@@ ####@", "@@ ###@@", "@@ #@###", "@@ #@@##", "@@@ @###", "@@@ ##@@", "@@@ #@##", "@@@ ##@#", "@@@ #@@#", "@@@ @@##", "@@@ ####@", "@@@ ###@@"] },
    { name: "NL", prior: 3, patterns: ["@@-###-@", "#-@@@-##", "@-###-@@", "@@-@@-##", "##-@@@-#", "#-@@-###", "@@@-##-@", "@-@@-###", "###-@@-#"] },
    { name: "BE", prior: 2, patterns: ["#-@@@-###"] },
    { name: "AT", prior: 2, patterns: ["@ ###@", "@ ####@", "@@ ###@", "@@ ##@@", "@@ #@@@", "@@ ####@"] },
    { name: "CH", prior: 2, patterns: ["@@ ######", "@@ #####", "@@ ####", "@@ ###"] },
    { name: "SE", prior: 2, patterns: ["@@@ ###", "@@@ ##@"] },
    { name: "NO", prior: 1, patterns: ["@@ #####"] },
    { name: "DK", prior: 1, patterns: ["@@ ## ###"] },
    { name: "FI", prior: 1, patterns: ["@@@-###", "@@-###"] },
    { name: "PT", prior: 2, patterns: ["@@-##-@@", "##-@@-##", "##-##-@@", "@@-##-##"] },
    { name: "CZ", prior: 2, patterns: ["#@# ####", "#@@ ####"] },
    { name: "SK", prior: 1, patterns: ["@@###@@", "@@-###@@"] },
    { name: "HU", prior: 1, patterns: ["@@@-###", "@@ @@-###"] },
    { name: "RO", prior: 2, patterns: ["@ ## @@@", "@ ### @@@", "@@ ## @@@"] },
    { name: "IE", prior: 1, patterns: ["###-@-#", "###-@-##", "###-@-###", "###-@-####", "###-@-#####", "##-@-#", "##-@-##", "##-@-###", "##-@-####", "##-@-#####", "###-@@-#", "###-@@-##", "###-@@-###", "###-@@-####", "##-@@-####", "##-@@-#####"] },
    { name: "GR", prior: 1, patterns: ["@@@-####"] },
    { name: "HR", prior: 1, patterns: ["@@ ###-@", "@@ ###-@@", "@@ ####-@", "@@ ####-@@"] },
    { name: "SI", prior: 1, patterns: ["@@ @@-###", "@@ ##-@@@", "@@ ###-@@"] },
    { name: "LT", prior: 1, patterns: ["@@@ ###"] },
    { name: "LV", prior: 1, patterns: ["@@-####", "@@-###"] },
    { name: "EE", prior: 1, patterns: ["### @@@"] },
    { name: "BG", prior: 1, patterns: ["@ #### @@", "@@ #### @@"] },
    { name: "LU", prior: 0.3, patterns: ["@@ ####", "#####"] },
  ],
};

export const BUILT_IN_GROUPS: Readonly<Record<string, RegionGroup>> = { us: US, eu: EU };

// ---------------------------------------------------------------------------------------------
// User definitions (lptFilterDefinitions)

const regionSchema = z.strictObject({
  name: z.string({ error: "must be a string" }).min(1, { error: "must not be empty" }).max(64, { error: "must be at most 64 characters" }),
  patterns: z
    .array(z.string({ error: "must be a pattern string" }), { error: "must be an array of patterns" })
    .min(1, { error: "must hold at least one pattern" })
    .superRefine((ps, ctx) => {
      ps.forEach((p, i) => {
        try {
          compilePattern(p);
        } catch (e) {
          ctx.addIssue({ code: "custom", path: [i], message: (e as Error).message });
        }
      });
    }),
  prior: z.number({ error: "must be a number above 0" }).positive({ error: "must be above 0" }).optional(),
});

export const definitionsSchema = z.strictObject(
  {
    groups: z.record(
      z.string().regex(/^[a-z0-9_-]{1,32}$/, { error: "group names are 1-32 characters of a-z, 0-9, '-' and '_'" }),
      z.strictObject({
        fallback: z.string({ error: "must be a string" }).min(1).max(64).optional(),
        extends: z.array(z.string()).optional(),
        normalize: z.record(z.string().regex(/^[A-Z0-9]$/, { error: "keys are single characters A-Z or 0-9" }), z.string().regex(/^[A-Z0-9]$/, { error: "must be a single character A-Z or 0-9" })).optional(),
        regions: z.array(regionSchema, { error: "must be an array of regions" }).default([]),
      }),
      { error: 'must map group names to {"regions": [...]}' },
    ),
  },
  { error: 'must be a JSON object {"groups": {...}} (see docs/vehicle-api.md#regions)' },
);

/**
 * The built-in groups plus those of a definitions file (which may add groups, or replace a built-in
 * one by using its name; `extends` lists groups whose regions come first). Throws INVALID_ARGUMENT
 * naming the file and the field.
 */
export function loadGroups(definitionsFile: string | null): Record<string, RegionGroup> {
  const groups: Record<string, RegionGroup> = { ...BUILT_IN_GROUPS };
  if (!definitionsFile) return groups;
  let json: unknown;
  try {
    json = JSON.parse(fs.readFileSync(/*turbopackIgnore: true*/ definitionsFile, "utf8"));
  } catch (e) {
    throw new ObscuraError("INVALID_ARGUMENT", `lptFilterDefinitions ${definitionsFile} cannot be read as JSON: ${(e as Error).message}`);
  }
  const r = definitionsSchema.safeParse(json);
  if (!r.success) {
    const i = r.error.issues[0]!;
    throw new ObscuraError("INVALID_ARGUMENT", `lptFilterDefinitions ${definitionsFile}: ${i.path.join(".") || "(file)"}: ${i.message}`);
  }
  for (const [name, g] of Object.entries(r.data.groups)) {
    const inherited = (g.extends ?? []).flatMap((e) => {
      const base = groups[e];
      if (!base) throw new ObscuraError("INVALID_ARGUMENT", `lptFilterDefinitions ${definitionsFile}: groups.${name}.extends: no group named ${JSON.stringify(e)} (known: ${Object.keys(groups).join(", ")})`);
      return base.regions;
    });
    const regions = [...inherited, ...g.regions];
    if (!regions.length) throw new ObscuraError("INVALID_ARGUMENT", `lptFilterDefinitions ${definitionsFile}: groups.${name} has no regions (give regions or extends)`);
    const normalize = { ...Object.assign({}, ...(g.extends ?? []).map((e) => groups[e]!.normalize ?? {})), ...(g.normalize ?? {}) };
    groups[name] = { fallback: g.fallback ?? name.toUpperCase(), regions, normalize };
  }
  return groups;
}
