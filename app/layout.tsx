import type { ReactNode } from "react";

export const metadata = { title: "Obscura", description: "Self-hosted redaction and video analytics" };

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body style={{ fontFamily: "system-ui, sans-serif", margin: "2rem", color: "#1b1b1b" }}>{children}</body>
    </html>
  );
}
