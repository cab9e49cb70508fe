import type { ReactNode } from "react";
import "./globals.css";

export const metadata = { title: "Obscura", description: "Self-hosted redaction and video analytics" };

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body className="min-h-screen bg-slate-50 font-sans text-slate-900 antialiased">{children}</body>
    </html>
  );
}
