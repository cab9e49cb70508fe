import { unknownPath } from "@/server/detection/api";

export const dynamic = "force-dynamic";

/** Any other path under /v1/: 406 with the Detection API's error body. */
const handler = async (req: Request) => unknownPath(req);
export { handler as GET, handler as POST, handler as PUT, handler as PATCH, handler as DELETE, handler as HEAD, handler as OPTIONS };
