"use client";
/** The project view's upload panel: a started video shows up in the list (refreshed from the server). */
import { useRouter } from "next/navigation";
import { UploadPanel } from "@/components/upload/upload-panel";

export function ProjectUploads({ projectId }: { projectId: string }) {
  const router = useRouter();
  return <UploadPanel projectId={projectId} onStarted={() => router.refresh()} />;
}
