import { handleDetection, methodNotAllowed } from "@/server/detection/api";

export const dynamic = "force-dynamic";

export const POST = handleDetection;

const notAllowed = async () => methodNotAllowed();
export { notAllowed as GET, notAllowed as PUT, notAllowed as PATCH, notAllowed as DELETE, notAllowed as HEAD, notAllowed as OPTIONS };
