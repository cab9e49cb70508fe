"use client";
/** The home page of a signed-in user with no project yet: upload a first video into a project. */
import { useRouter } from "next/navigation";
import { UploadPanel } from "@/components/upload/upload-panel";

export function FirstUpload({ defaultProjectId }: { defaultProjectId: string }) {
  const router = useRouter();
  return <UploadPanel projectId={defaultProjectId} chooseProject onStarted={(projectId) => router.push(`/projects/${encodeURIComponent(projectId)}`)} />;
}
