/** The video process request (POST /api/v1/videos:process), spec/redaction-api.md. */
import { z } from "zod";
import { named } from "./registry";
import {
  VIDEO_FEATURES,
  hashTypeList,
  inputUriSchema,
  normaliseFeatures,
  notificationSpecs,
  type NotificationSpec,
  notificationsSchema,
  outputUriSchema,
  projectIdSchema,
  tagSchema,
  unitInterval,
  type Feature,
  type HashType,
} from "./common";

export const SESSION_ID_RULE = "sessionId must be 1-128 characters of A-Z, a-z, 0-9, '.', '_' and '-', starting with a letter or digit";

export const prepareConfigSchema = named(
  "PrepareConfig",
  z.strictObject({
    sessionId: z
      .string({ error: SESSION_ID_RULE })
      .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/, { error: SESSION_ID_RULE })
      .optional()
      .meta({ description: "Unique id of the video/session; a UUID is generated when absent. Cannot change once defined." }),
    ignoreCertificateErrors: z.boolean({ error: "ignoreCertificateErrors must be true or false" }).optional(),
    hashTypes: hashTypeList("hashTypes").optional().meta({ description: "Hashes of the original media (default [sha256])." }),
  }),
);

export const PROFILE_NAMES = ["gen6_standard", "gen6_highMotion", "gen6_conference", "gen5_standard", "gen5_highMotion"] as const;

const faceBoxExpansion = (name: string) =>
  z
    .number({ error: `${name} must be a number between 1 and 5` })
    .min(1, { error: `${name} must be between 1 and 5` })
    .max(5, { error: `${name} must be between 1 and 5` });

export const processConfigSchema = named(
  "ProcessConfig",
  z
    .strictObject({
      objectsConfidenceThreshold: unitInterval("objectsConfidenceThreshold").optional().meta({ description: "Default 0.3 (gen6_standard)." }),
      confidenceThreshold: unitInterval("confidenceThreshold").optional().meta({ description: "Alias of objectsConfidenceThreshold." }),
      innerObjectsConfidenceThreshold: unitInterval("innerObjectsConfidenceThreshold").optional().meta({ description: "Default 0.15 (gen6_standard)." }),
      confidenceThresholdSub: unitInterval("confidenceThresholdSub").optional().meta({ description: "Alias of innerObjectsConfidenceThreshold." }),
      faceBoxExpansionFactor: faceBoxExpansion("faceBoxExpansionFactor").optional().meta({ description: "Default 1.5." }),
      faceboxExpand: faceBoxExpansion("faceboxExpand").optional().meta({ description: "Alias of faceBoxExpansionFactor." }),
      profileName: z
        .enum(PROFILE_NAMES, { error: `profileName must be one of ${PROFILE_NAMES.join(", ")}` })
        .optional()
        .meta({ description: "Default gen6_standard." }),
    })
    .superRefine((v, ctx) => {
      const pairs = [
        ["objectsConfidenceThreshold", "confidenceThreshold"],
        ["innerObjectsConfidenceThreshold", "confidenceThresholdSub"],
        ["faceBoxExpansionFactor", "faceboxExpand"],
      ] as const;
      for (const [name, alias] of pairs) {
        if (v[name] !== undefined && v[alias] !== undefined && v[name] !== v[alias]) {
          ctx.addIssue({ code: "custom", path: [alias], message: `${alias} is an alias of ${name}; give one of them, or the same value in both` });
        }
      }
    }),
);

export const REDACTION_STYLES = ["OUTLINE", "FILL", "PIXELATE", "BLUR", "MOSAIC", "SMART"] as const;
export const REDACTION_SHAPES = ["RECTANGLE", "ELLIPSE"] as const;
export const REDACTION_INTENSITIES = ["LOW", "MEDIUM", "HIGH"] as const;
export const MASK_AUDIO = ["SILENCE", "BEEP", "SCRAMBLE"] as const;
export const VIDEO_PRESETS = ["ULTRAFAST", "SUPERFAST", "VERYFAST", "FASTER", "FAST", "MEDIUM", "SLOW", "SLOWER", "VERYSLOW"] as const;

const oneOf = <T extends readonly [string, ...string[]]>(name: string, values: T) =>
  z.enum(values, { error: `${name} must be one of ${values.join(", ")}` });

const scrambleParam = z
  .number({ error: "maskAudioParams items must be numbers between -1.0 and 1.0" })
  .min(-1, { error: "maskAudioParams items must be between -1.0 and 1.0" })
  .max(1, { error: "maskAudioParams items must be between -1.0 and 1.0" });

export const renderConfigSchema = named(
  "RenderConfig",
  z.strictObject({
    redactionStyle: oneOf("redactionStyle", REDACTION_STYLES).optional().meta({ description: "Default MOSAIC." }),
    redactionShape: oneOf("redactionShape", REDACTION_SHAPES).optional().meta({ description: "Default RECTANGLE." }),
    redactionIntensity: oneOf("redactionIntensity", REDACTION_INTENSITIES).optional().meta({ description: "Default MEDIUM." }),
    redactionColor: z
      .string({ error: "redactionColor must be a colour as #RRGGBB" })
      .regex(/^#[0-9A-Fa-f]{6}$/, { error: "redactionColor must be a colour as #RRGGBB (e.g. #9F0500)" })
      .optional()
      .meta({ description: "Default #9F0500; used by OUTLINE and FILL." }),
    maskAudio: oneOf("maskAudio", MASK_AUDIO).optional().meta({ description: "Default: no masking. When set, all audio is masked." }),
    maskAudioParams: z
      .array(scrambleParam, { error: "maskAudioParams must be an array of exactly 2 numbers between -1.0 and 1.0" })
      .length(2, { error: "maskAudioParams must have exactly 2 items" })
      .optional()
      .meta({ description: "Only for SCRAMBLE; default [0.32, -0.24]." }),
    videoQuality: unitInterval("videoQuality").optional().meta({ description: "Default 0.65." }),
    videoPreset: oneOf("videoPreset", VIDEO_PRESETS).optional().meta({ description: "Default ULTRAFAST; slower compresses better." }),
    exportHashes: hashTypeList("exportHashes").optional().meta({ description: "Hashes of the exported file, saved in the exported metadata." }),
    leakCheck: z
      .boolean({ error: "leakCheck must be true or false" })
      .optional()
      .meta({
        description:
          "Default true. After MEDIA_RENDER, scan the rendered video again with the detectors of the requested features at a lower threshold and report every object found outside the redacted regions as a possible leak (leaks.json in the session state, leakCount in the operation's response; docs/rendering.md#leak-check). The server can turn it off for every request with OBSCURA_LEAK_CHECK=0.",
      }),
  }),
);

export const LANGUAGE_CODE_RULE =
  "languageCode must be a BCP-47 language tag: a 2-3 letter language, then optional subtags of 2-8 letters or digits (e.g. en-US, de, pt-BR, zh-Hans-CN)";
export const DEFAULT_LANGUAGE_CODE = "en-US";

export const speechTranscriptionConfigSchema = named(
  "SpeechTranscriptionConfig",
  z.strictObject({
    languageCode: z
      .string({ error: LANGUAGE_CODE_RULE })
      .max(35, { error: LANGUAGE_CODE_RULE })
      .regex(/^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/, { error: LANGUAGE_CODE_RULE })
      .optional()
      .meta({
        description: `Language spoken in the video, as a BCP-47 tag; default ${DEFAULT_LANGUAGE_CODE}. English is served by the built-in model; other languages need a speech model installed by the operator (docs/speech.md).`,
        examples: ["en-US", "de-DE"],
      }),
  }),
);

export const videoContextSchema = named(
  "VideoContext",
  z.strictObject({
    prepareConfig: prepareConfigSchema.optional(),
    processConfig: processConfigSchema.optional(),
    renderConfig: renderConfigSchema.optional(),
    speechTranscriptionConfig: speechTranscriptionConfigSchema
      .optional()
      .meta({ description: "For SPEECH_TRANSCRIPTION (docs/speech.md): the language spoken." }),
  }),
);

export const videoProcessRequestSchema = named(
  "VideoProcessRequest",
  z
    .strictObject({
      inputUri: inputUriSchema,
      features: z
        .array(oneOf("features items", VIDEO_FEATURES), { error: "features must be an array of feature names" })
        .min(1, { error: `features must name at least one of ${VIDEO_FEATURES.join(", ")}` })
        .max(32, { error: "features must have at most 32 items" }),
      outputUri: outputUriSchema.optional(),
      notifications: notificationsSchema.optional(),
      videoContext: videoContextSchema.optional(),
      projectId: projectIdSchema.optional(),
      tag: tagSchema.optional(),
      acl: z
        .array(z.string({ error: "acl items must be usernames (strings)" }).min(1).max(128), { error: "acl must be an array of usernames" })
        .max(1000, { error: "acl must have at most 1000 usernames" })
        .optional()
        .meta({ description: "Usernames given access to the video in the standard UI." }),
    })
    .superRefine((v, ctx) => {
      const f = normaliseFeatures(v.features ?? []);
      if (f.includes("STATE_DROP") && v.outputUri?.endsWith("/") && f.length === 1) {
        ctx.addIssue({ code: "custom", path: ["outputUri"], message: "STATE_DROP alone writes nothing: leave outputUri out" });
      }
    }),
  "Body of POST /api/v1/videos:process.",
);

export type VideoProcessRequest = z.infer<typeof videoProcessRequestSchema>;

/** Defaults of the spec, applied once so the worker never guesses. */
export interface VideoJobSpec {
  kind: "video";
  inputUri: string;
  outputUri: string | null;
  features: Feature[];
  projectId: string;
  sessionId: string;
  tag: Record<string, unknown> | null;
  notifications: NotificationSpec[];
  acl: string[];
  prepare: { ignoreCertificateErrors: boolean; hashTypes: HashType[]; sessionIdGiven: boolean };
  process: {
    objectsConfidenceThreshold: number;
    innerObjectsConfidenceThreshold: number;
    faceBoxExpansionFactor: number;
    profileName: (typeof PROFILE_NAMES)[number];
  };
  render: {
    redactionStyle: (typeof REDACTION_STYLES)[number];
    redactionShape: (typeof REDACTION_SHAPES)[number];
    redactionIntensity: (typeof REDACTION_INTENSITIES)[number];
    redactionColor: string;
    maskAudio: (typeof MASK_AUDIO)[number] | null;
    maskAudioParams: [number, number];
    videoQuality: number;
    videoPreset: (typeof VIDEO_PRESETS)[number];
    exportHashes: HashType[];
    /** Leak check after rendering (absent in jobs queued before it existed: on). */
    leakCheck?: boolean;
  };
  /** SPEECH_TRANSCRIPTION settings (absent in jobs queued before it existed: en-US). */
  speech?: { languageCode: string };
}

/** The spec's RenderConfig defaults (video). */
export const RENDER_DEFAULTS: Readonly<Required<Omit<VideoJobSpec["render"], "leakCheck">>> = {
  redactionStyle: "MOSAIC",
  redactionShape: "RECTANGLE",
  redactionIntensity: "MEDIUM",
  redactionColor: "#9F0500",
  maskAudio: null,
  maskAudioParams: [0.32, -0.24],
  videoQuality: 0.65,
  videoPreset: "ULTRAFAST",
  exportHashes: [],
};

export const PROFILE_DEFAULTS: Record<(typeof PROFILE_NAMES)[number], { objects: number; inner: number }> = {
  gen6_standard: { objects: 0.3, inner: 0.15 },
  gen6_highMotion: { objects: 0.3, inner: 0.15 },
  gen6_conference: { objects: 0.3, inner: 0.15 },
  gen5_standard: { objects: 0.3, inner: 0.15 },
  gen5_highMotion: { objects: 0.3, inner: 0.15 },
};

const unique = <T>(xs: readonly T[]) => [...new Set(xs)];

export function videoJobSpec(req: VideoProcessRequest, ids: { projectId: string; sessionId: string }): VideoJobSpec {
  const p = req.videoContext?.processConfig ?? {};
  const r = req.videoContext?.renderConfig ?? {};
  const prep = req.videoContext?.prepareConfig ?? {};
  const profileName = p.profileName ?? "gen6_standard";
  return {
    kind: "video",
    inputUri: req.inputUri,
    outputUri: req.outputUri ?? null,
    features: normaliseFeatures(req.features),
    projectId: ids.projectId,
    sessionId: ids.sessionId,
    tag: req.tag ?? null,
    notifications: notificationSpecs(req.notifications),
    acl: unique(req.acl ?? []),
    prepare: {
      ignoreCertificateErrors: prep.ignoreCertificateErrors ?? false,
      hashTypes: unique(prep.hashTypes ?? ["sha256"]),
      sessionIdGiven: prep.sessionId !== undefined,
    },
    process: {
      objectsConfidenceThreshold: p.objectsConfidenceThreshold ?? p.confidenceThreshold ?? PROFILE_DEFAULTS[profileName].objects,
      innerObjectsConfidenceThreshold: p.innerObjectsConfidenceThreshold ?? p.confidenceThresholdSub ?? PROFILE_DEFAULTS[profileName].inner,
      faceBoxExpansionFactor: p.faceBoxExpansionFactor ?? p.faceboxExpand ?? 1.5,
      profileName,
    },
    render: {
      redactionStyle: r.redactionStyle ?? RENDER_DEFAULTS.redactionStyle,
      redactionShape: r.redactionShape ?? RENDER_DEFAULTS.redactionShape,
      redactionIntensity: r.redactionIntensity ?? RENDER_DEFAULTS.redactionIntensity,
      redactionColor: (r.redactionColor ?? RENDER_DEFAULTS.redactionColor).toUpperCase(),
      maskAudio: r.maskAudio ?? RENDER_DEFAULTS.maskAudio,
      maskAudioParams: (r.maskAudioParams as [number, number] | undefined) ?? [...RENDER_DEFAULTS.maskAudioParams],
      videoQuality: r.videoQuality ?? RENDER_DEFAULTS.videoQuality,
      videoPreset: r.videoPreset ?? RENDER_DEFAULTS.videoPreset,
      exportHashes: unique(r.exportHashes ?? []),
      leakCheck: r.leakCheck ?? true,
    },
    speech: { languageCode: req.videoContext?.speechTranscriptionConfig?.languageCode ?? DEFAULT_LANGUAGE_CODE },
  };
}
