/**
 * One typed error for the whole product. Codes are google.rpc canonical codes (the same numbers
 * appear in `operation.error.code`); `httpStatus` maps each to the HTTP status used when the error
 * answers an HTTP request. Messages are written for the user: what was wrong and what is allowed.
 */
export const ErrorCode = {
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
  UNAUTHENTICATED: 16,
} as const;

export type ErrorStatus = keyof typeof ErrorCode;

export interface ErrorDetail {
  /** Dotted path of the offending field in the request body, e.g. `videoContext.renderConfig.videoQuality`. */
  field: string;
  /** What is wrong with it and what is allowed. */
  problem: string;
}

const httpStatusOf: Record<ErrorStatus, number> = {
  CANCELLED: 499,
  UNKNOWN: 500,
  INVALID_ARGUMENT: 400,
  DEADLINE_EXCEEDED: 504,
  NOT_FOUND: 404,
  ALREADY_EXISTS: 409,
  PERMISSION_DENIED: 403,
  RESOURCE_EXHAUSTED: 429,
  FAILED_PRECONDITION: 400,
  ABORTED: 409,
  OUT_OF_RANGE: 400,
  UNIMPLEMENTED: 501,
  INTERNAL: 500,
  UNAVAILABLE: 503,
  DATA_LOSS: 500,
  UNAUTHENTICATED: 401,
};

export class ObscuraError extends Error {
  readonly status: ErrorStatus;
  readonly details: ErrorDetail[];
  /** Overrides the HTTP status derived from `status` (413, 415, 405 have no rpc code of their own). */
  readonly httpStatusOverride?: number;

  constructor(status: ErrorStatus, message: string, opts: { details?: ErrorDetail[]; httpStatus?: number; cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = "ObscuraError";
    this.status = status;
    this.details = opts.details ?? [];
    this.httpStatusOverride = opts.httpStatus;
  }

  get code(): number {
    return ErrorCode[this.status];
  }

  get httpStatus(): number {
    return this.httpStatusOverride ?? httpStatusOf[this.status];
  }

  /** The JSON body every API error answers with (see docs/errors.md). */
  toBody(): ErrorBody {
    return {
      error: {
        code: this.httpStatus,
        status: this.status,
        message: this.message,
        ...(this.details.length ? { details: this.details } : {}),
      },
    };
  }
}

export interface ErrorBody {
  error: { code: number; status: ErrorStatus; message: string; details?: ErrorDetail[] };
}

export function isObscuraError(e: unknown): e is ObscuraError {
  return e instanceof ObscuraError || (typeof e === "object" && e !== null && (e as { name?: string }).name === "ObscuraError");
}

/** Turns anything thrown into an ObscuraError without leaking stack traces to users. */
export function toObscuraError(e: unknown, fallback: ErrorStatus = "INTERNAL"): ObscuraError {
  if (isObscuraError(e)) return e;
  if (e instanceof Error && e.name === "AbortError") return new ObscuraError("CANCELLED", "the operation was cancelled");
  const message = e instanceof Error ? e.message : String(e);
  return new ObscuraError(fallback, message || "internal error", { cause: e });
}
